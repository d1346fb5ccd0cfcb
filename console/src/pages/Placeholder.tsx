import { Link } from 'react-router';
import { EmptyState, PageHeader } from '../components';

/** A page that is still being built: the navigation works, the page says what will be here. */
export function Placeholder({ title, what }: { title: string; what: string }) {
  return (
    <>
      <PageHeader title={title} description={what} />
      <div className="card">
        <EmptyState title={`${title} are coming to the console`}>
          Until then, the <a href="/docs">HTTP API</a> and the CLI do everything this page will.
        </EmptyState>
      </div>
    </>
  );
}

export function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <div className="card">
        <EmptyState title="There is nothing at this address" action={<Link to="/">Go to the dashboard</Link>} />
      </div>
    </>
  );
}
