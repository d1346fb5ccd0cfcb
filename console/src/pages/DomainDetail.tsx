import { Placeholder } from './Placeholder';

export default function DomainDetail() {
  return <Placeholder title="DomainDetail" what="This page is being built." />;
}
