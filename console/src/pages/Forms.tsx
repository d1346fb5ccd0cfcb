import { Placeholder } from './Placeholder';

export default function Forms() {
  return <Placeholder title="Forms" what="This page is being built." />;
}
