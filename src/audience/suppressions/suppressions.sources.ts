import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../http/schema-helpers.js';

/**
 * The message a suppression entry or a contact's event came from, as a person reads it: a broadcast, or the email of
 * an automation's send step. An automation's email is a broadcast row hidden from the broadcasts API (docs/automations.md),
 * so its `broadcastId` names nothing a client can open; `source` says which automation and step sent it.
 */
export const MessageSourceSchema = Type.Object(
  {
    type: StringEnum(['broadcast', 'automation'] as const),
    broadcastId: Type.String({ description: 'as the entry or event names it' }),
    automationId: Nullable(
      Type.String({ description: "the automation whose send step sent it; null for a broadcast's" }),
    ),
    stepId: Nullable(Type.String({ description: "the automation's send step" })),
    name: Nullable(
      Type.String({ description: "the broadcast's or the automation's name now; null when it has been deleted" }),
    ),
  },
  { description: 'what sent the message (null when no message is named)' },
);
export type MessageSource = Static<typeof MessageSourceSchema>;

/**
 * A port (docs/architecture.md, rule 3): the sources of the messages these broadcast ids name. Broadcasts and
 * automations sit above the audience; the composition root implements it (src/composition/message-sources.ts). An id
 * that names no broadcast row (deleted) is left out of the map.
 */
export type MessageSources = (
  workspaceId: string,
  broadcastIds: readonly string[],
) => Promise<Map<string, MessageSource>>;

/** No sources: every id unknown (services built without the port, in unit tests). */
export const noMessageSources: MessageSources = async () => new Map();

/** `rows` with `source` added from their `broadcastId`, in one lookup. */
export async function withSources<T extends { broadcastId: string | null }>(
  sources: MessageSources,
  workspaceId: string,
  rows: T[],
): Promise<(T & { source: MessageSource | null })[]> {
  const ids = rows.flatMap((r) => (r.broadcastId ? [r.broadcastId] : []));
  const found = ids.length ? await sources(workspaceId, ids) : new Map<string, MessageSource>();
  return rows.map((r) => ({ ...r, source: (r.broadcastId && found.get(r.broadcastId)) || null }));
}
