import { Placeholder } from './Placeholder';

export default function Webhooks() {
  return <Placeholder title="Webhooks" what="This page is being built." />;
}
