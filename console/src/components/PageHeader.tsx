import { useEffect, type ReactNode } from 'react';
import { Link } from 'react-router';

export function PageHeader({
  title,
  description,
  actions,
  back,
}: {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
  back?: { to: string; label: string };
}) {
  useEffect(() => {
    document.title = `${title} · Formcast`;
  }, [title]);
  return (
    <header className="page-header">
      <div>
        {back && (
          <div className="breadcrumb">
            <Link to={back.to}>← {back.label}</Link>
          </div>
        )}
        <h1>{title}</h1>
        {description && <p>{description}</p>}
      </div>
      {actions && <div className="row">{actions}</div>}
    </header>
  );
}
