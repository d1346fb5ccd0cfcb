/**
 * What sent a message, as a link a person can follow: a broadcast's report, or the automation (at its send step) whose
 * email it was. An automation's email names a broadcast row the broadcasts API hides, so it never links to
 * /broadcasts/<id> (that page would say "not found"); the API's `source` tells which it is (docs/events.md).
 */
import { Link } from 'react-router';
import type { paths } from '../api/generated/schema';

export type MessageSource = NonNullable<
  paths['/v1/suppressions/{email}']['get']['responses'][200]['content']['application/json']['source']
>;

/** Where a source leads in the console, and how it reads; no `to` when what sent it was deleted. */
export function messageSourceLink(source: MessageSource): { to?: string; label: string } {
  if (source.type === 'automation') {
    if (source.name === null || !source.automationId) return { label: 'An automation that was deleted' };
    const step = source.stepId ? `?step=${encodeURIComponent(source.stepId)}` : '';
    return { to: `/automations/${source.automationId}${step}`, label: `Automation “${source.name}”` };
  }
  if (source.name === null) return { label: 'A broadcast that was deleted' };
  return { to: `/broadcasts/${source.broadcastId}`, label: `Broadcast “${source.name}”` };
}

/** The source as a link (or plain words once deleted); `open` phrases it as an action ("Open the automation …"). */
export function MessageSourceLink({ source, open = false }: { source: MessageSource; open?: boolean }) {
  const { to, label } = messageSourceLink(source);
  if (!to) return <span className="muted">{label}</span>;
  const text = open
    ? source.type === 'automation'
      ? `Open the automation “${source.name}” at this email`
      : `Open the broadcast “${source.name}”`
    : label;
  return (
    <Link to={to} className="break">
      {text}
    </Link>
  );
}
