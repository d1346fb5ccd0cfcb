import { Placeholder } from './Placeholder';

export default function WebhookDetail() {
  return <Placeholder title="WebhookDetail" what="This page is being built." />;
}
