import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from '../../db/connection.js';
import type { FieldError } from '../../errors/errors.js';

/**
 * Contact tags (contract §18; docs/contacts.md "Tags"), the one writer of `contact_tags`: free labels on a contact,
 * up to MAX_TAGS of 1..MAX_TAG_LENGTH characters, one tag whatever its case ("VIP" and "vip" are one; the first
 * spelling is kept). Stored a row per tag keyed by the tag lower-cased (tagKey), so that "has the tag" is one index
 * probe per contact and counting a tag's contacts is one index range (contact_tags_key).
 */
export const MAX_TAGS = 100;
export const MAX_TAG_LENGTH = 64;

/** What makes two spellings one tag. */
export const tagKey = (tag: string): string => tag.toLowerCase();

const codePoints = (s: string) => [...s].length;

/** The problem with one tag (already trimmed), if any. */
export function tagProblem(tag: string): string | undefined {
  if (tag === '') return 'must not be empty or only spaces';
  if (codePoints(tag) > MAX_TAG_LENGTH) return `must be at most ${MAX_TAG_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(tag)) return 'must not contain control characters (a line break, a tab, NUL)';
  if (/\p{Cs}/u.test(tag)) return 'must be well-formed Unicode (no lone surrogates)';
  return undefined;
}

/**
 * Tags as given, checked and made a contact's list: each trimmed, the later spellings of one tag dropped (the first
 * is kept), in the order given. Errors at `${path}/<i>`, or at `path` for more than MAX_TAGS distinct tags.
 */
export function normalizeTags(input: readonly string[], path = '/tags'): { tags: string[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const tags: string[] = [];
  input.forEach((raw, i) => {
    const tag = raw.trim();
    const problem = tagProblem(tag);
    if (problem) return errors.push({ path: `${path}/${i}`, message: problem });
    const key = tagKey(tag);
    if (seen.has(key)) return;
    seen.add(key);
    tags.push(tag);
  });
  if (tags.length > MAX_TAGS)
    errors.push({
      path,
      message: `must have at most ${MAX_TAGS} tags (it has ${tags.length})`,
      keyword: 'maxItems',
      params: { limit: MAX_TAGS },
    });
  return { tags, errors };
}

/** Each contact's tags, in their order: contact id → tags (a contact without tags is not in the map). */
export async function tagsOfContacts(
  db: Executor,
  workspaceId: string,
  contactIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (contactIds.length === 0) return out;
  const rows = await db
    .selectFrom('contact_tags')
    .select(['contact_id', 'tag'])
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', 'in', [...contactIds])
    .orderBy('contact_id')
    .orderBy('position')
    .execute();
  for (const r of rows) {
    const list = out.get(r.contact_id);
    if (list) list.push(r.tag);
    else out.set(r.contact_id, [r.tag]);
  }
  return out;
}

const sameTags = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * Replaces the contact's tags with `tags` (normalised: normalizeTags). True when they changed (the caller writes the
 * contact.updated event).
 */
export async function replaceTags(
  trx: Executor,
  workspaceId: string,
  contactId: string,
  tags: readonly string[],
  now: string,
): Promise<boolean> {
  const before = (await tagsOfContacts(trx, workspaceId, [contactId])).get(contactId) ?? [];
  if (sameTags(before, tags)) return false;
  await trx
    .deleteFrom('contact_tags')
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', '=', contactId)
    .execute();
  if (tags.length)
    await trx
      .insertInto('contact_tags')
      .values(
        tags.map((tag, position) => ({
          workspace_id: workspaceId,
          contact_id: contactId,
          tag_key: tagKey(tag),
          tag,
          position,
          created_at: now,
        })),
      )
      .execute();
  return true;
}

/**
 * Adds tags to many contacts at once (an import batch, a bulk action's batch): contact id → tags (normalised), each contact's new tags after
 * its own, those it has (in any spelling) left as they are, none past MAX_TAGS. Returns the contacts whose tags changed,
 * and those that had MAX_TAGS tags and lacked one of `adds`. Two statements per 500 contacts.
 */
export async function mergeTags(
  trx: Executor,
  workspaceId: string,
  adds: ReadonlyMap<string, readonly string[]>,
  now: string,
): Promise<{ changed: Set<string>; full: Set<string> }> {
  const changed = new Set<string>();
  const full = new Set<string>();
  const ids = [...adds.keys()];
  for (let start = 0; start < ids.length; start += 500) {
    const chunk = ids.slice(start, start + 500);
    const rows = await trx
      .selectFrom('contact_tags')
      .select(['contact_id', 'tag_key', 'position'])
      .where('workspace_id', '=', workspaceId)
      .where('contact_id', 'in', chunk)
      .execute();
    const have = new Map<string, { keys: Set<string>; next: number }>();
    for (const r of rows) {
      const h = have.get(r.contact_id) ?? { keys: new Set<string>(), next: 0 };
      h.keys.add(r.tag_key);
      h.next = Math.max(h.next, Number(r.position) + 1);
      have.set(r.contact_id, h);
    }
    const values = [];
    for (const id of chunk) {
      const h = have.get(id) ?? { keys: new Set<string>(), next: 0 };
      for (const tag of adds.get(id)!) {
        const key = tagKey(tag);
        if (h.keys.has(key)) continue;
        if (h.keys.size >= MAX_TAGS) {
          full.add(id);
          continue;
        }
        h.keys.add(key);
        values.push({
          workspace_id: workspaceId,
          contact_id: id,
          tag_key: key,
          tag,
          position: h.next++,
          created_at: now,
        });
        changed.add(id);
      }
    }
    for (let i = 0; i < values.length; i += 500)
      await trx
        .insertInto('contact_tags')
        .values(values.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['contact_id', 'tag_key']).doNothing())
        .execute();
  }
  return { changed, full };
}

/**
 * A cell of an import's tags column as tags: a Mailchimp list of quoted tags (`"VIP","Customer"`, a quote inside one
 * doubled) or tags separated by commas (`VIP, Customer`); blanks dropped (normalizeTags checks the rest).
 */
export function parseTagCell(cell: string): string[] {
  const text = cell.trim();
  if (!text.startsWith('"')) return text.split(',').filter((t) => t.trim() !== '');
  const tags: string[] = [];
  const re = /\s*"((?:[^"]|"")*)"\s*(?:,|$)/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < text.length && (m = re.exec(text))) tags.push(m[1]!.replace(/""/g, '"'));
  // Not such a list after all (a stray quote): read it as comma-separated.
  if (re.lastIndex < text.length || tags.length === 0) return text.split(',').filter((t) => t.trim() !== '');
  return tags.filter((t) => t.trim() !== '');
}

/** Tags as one CSV cell of the export, read back by parseTagCell: comma-separated, or quoted when a tag holds a comma or a quote. */
export function tagCell(tags: readonly string[]): string {
  if (!tags.some((t) => t.includes(',') || t.includes('"'))) return tags.join(',');
  return tags.map((t) => `"${t.replace(/"/g, '""')}"`).join(',');
}

/** Removes a tag (any spelling) from contacts; returns those that had it. Safe to repeat. One statement. */
export async function removeTag(
  trx: Executor,
  workspaceId: string,
  contactIds: readonly string[],
  tag: string,
): Promise<Set<string>> {
  if (contactIds.length === 0) return new Set();
  const rows = await trx
    .deleteFrom('contact_tags')
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', 'in', [...contactIds])
    .where('tag_key', '=', tagKey(tag))
    .returning('contact_id')
    .execute();
  return new Set(rows.map((r) => r.contact_id));
}

/**
 * The workspace's tags with how many contacts have each, most used first (GET /v1/tags). A tag spelled differently on
 * different contacts is one, shown in its first spelling in code point order. Read from contact_tags_key alone.
 */
export async function workspaceTags(
  db: Executor,
  workspaceId: string,
  limit: number,
): Promise<{ tag: string; contacts: number }[]> {
  const rows = await db
    .selectFrom('contact_tags')
    .select((eb) => [eb.fn.min('tag').as('tag'), eb.fn.countAll<number | string>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .groupBy('tag_key')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('tag_key')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ tag: String(r.tag), contacts: Number(r.n) }));
}

/**
 * "The contact has (or has not) the tag" as raw SQL on `contacts` (the segment filter compiler; the contact list's
 * `tag` filter): one EXISTS probing contact_tags_pk (contact_id, tag_key). Any spelling of the tag matches.
 */
export function hasTagSql(workspaceId: string, tag: string, has: boolean): RawBuilder<SqlBool> {
  const exists = sql<SqlBool>`exists (select 1 from contact_tags as ctg where ctg.contact_id = contacts.id and ctg.tag_key = ${tagKey(tag)} and ctg.workspace_id = ${workspaceId})`;
  return has ? sql<SqlBool>`(${exists})` : sql<SqlBool>`(not ${exists})`;
}
