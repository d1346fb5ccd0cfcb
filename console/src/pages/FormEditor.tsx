import { Placeholder } from './Placeholder';

export default function FormEditor() {
  return <Placeholder title="FormEditor" what="This page is being built." />;
}
