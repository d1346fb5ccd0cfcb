import { Placeholder } from './Placeholder';

export default function Domains() {
  return <Placeholder title="Domains" what="This page is being built." />;
}
