/**
 * What a role does not allow, said in plain words with whom to ask (lib/roles.ts): "Only admins and owners manage
 * API keys. Ask Mia Marketer (mia@acme.test)." Never a scope's name. `page` makes it the whole page's content (a
 * page reached by its address that the role cannot use); otherwise it is a callout beside what it replaces.
 */
import { Fragment } from 'react';
import { useAskWhom, useSession, type Manager } from '../api/session';
import { type Action, whoCanSentence } from '../lib/roles';

function Person({ m }: { m: Manager }) {
  return (
    <>
      {m.name ? `${m.name} (` : ''}
      <a href={`mailto:${m.email}`}>{m.email}</a>
      {m.name ? ')' : ''}
    </>
  );
}

/** "Ask Mia Marketer (mia@acme.test) or Al (al@acme.test)." */
export function AskWhom({ action }: { action: Action }) {
  const whom = useAskWhom(action);
  const session = useSession();
  if (whom.length === 0)
    return <>{session.user.role === 'owner' ? null : `Ask an owner of ${session.workspace.name}.`}</>;
  return (
    <>
      Ask{' '}
      {whom.map((m, i) => (
        <Fragment key={m.email}>
          {i > 0 && (i === whom.length - 1 ? ' or ' : ', ')}
          <Person m={m} />
        </Fragment>
      ))}
      .
    </>
  );
}

/** The reason text alone, for a disabled control's title (a tooltip): "Only editors, admins and owners …". */
export function notAllowedText(action: Action, words?: string): string {
  return whoCanSentence(action, words);
}

export function NotAllowed({
  action,
  words,
  page,
  title,
}: {
  action: Action;
  /** What the action is in this page's words ("create forms"); the action's general words otherwise. */
  words?: string;
  /** The whole page's content, with this title (the page is not for this role). */
  page?: boolean;
  title?: string;
}) {
  const sentence = whoCanSentence(action, words);
  if (page)
    return (
      <div className="card not-allowed" role="status">
        <div className="state">
          <h2>{title ?? 'Not available with your role'}</h2>
          <p>
            {sentence} <AskWhom action={action} />
          </p>
        </div>
      </div>
    );
  return (
    <p className="callout callout-info not-allowed">
      {sentence} <AskWhom action={action} />
    </p>
  );
}
