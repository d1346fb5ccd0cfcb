import { useEffect, type ReactNode } from 'react';
import { Link } from 'react-router';
import { useCan } from '../api/session';
import { whoCanSentence, type Action } from '../lib/roles';

export function PageHeader({
  title,
  description,
  actions,
  back,
  needs,
}: {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
  back?: { to: string; label: string };
  /**
   * What the page's actions need (lib/roles.ts): without it, the actions give way to a plain sentence saying who
   * can ("Only editors, admins and owners create, change and delete forms.").
   */
  needs?: Action;
}) {
  const can = useCan();
  const denied = needs && !can(needs);
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
      {denied ? (
        <p className="muted small not-allowed-note">{whoCanSentence(needs)}</p>
      ) : (
        actions && <div className="row">{actions}</div>
      )}
    </header>
  );
}
