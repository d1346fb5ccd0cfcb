import { Placeholder } from './Placeholder';

export default function Dashboard() {
  return <Placeholder title="Dashboard" what="This page is being built." />;
}
