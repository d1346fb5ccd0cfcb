import { Placeholder } from './Placeholder';

export default function People() {
  return <Placeholder title="People" what="This page is being built." />;
}
