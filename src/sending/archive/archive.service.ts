import { XMLBuilder } from 'fast-xml-parser';
import type { Db } from '../../db/connection.js';
import { getContact } from '../../audience/index.js';
import { getWorkspace, workspaceBySlug } from '../../access/index.js';
import { notFound } from '../../errors/errors.js';
import { escapeHtml } from '../../lib/html.js';
import { isRenderLimit, renderTemplate } from '../../lib/liquid.js';
import { htmlToText } from '../../mail/compose.js';
import { workspaceScope } from '../../mail/documents.js';
import type { Locale } from '../../pages/i18n.js';
import { withVariant } from '../broadcasts/broadcasts.ab.js';
import { getBroadcast } from '../broadcasts/broadcasts.repository.js';
import type { Broadcast } from '../broadcasts/broadcasts.schemas.js';
import { assembleContent } from '../deliveries/message.assembly.js';
import { contactScope, type MessageTemplates } from '../deliveries/message.content.js';
import { readWebversionToken, webversionUrl } from '../deliveries/webversion.js';
import * as repo from './archive.repository.js';

/**
 * The web version and the public archive (docs/archive.md, contract §19). Both render a broadcast's templates again,
 * in a browser, without the open pixel and with its links as written (not rewritten for click tracking):
 *
 * - the web version (`/w/{token}`) as its recipient got it: their contact data as it is now, their own unsubscribe
 *   link;
 * - an archived broadcast (`/archive/{slug}/{id}`) for an anonymous reader: no contact data (`contact.*` is empty, so
 *   `| default:` shows its default), no unsubscribe link or token.
 *
 * Liquid sees `in_browser: true` on both (`{% unless in_browser %}` hides what only makes sense in a mailbox; the block
 * editor's "View in browser" link does it by itself) and `webversion_url` is the page's own address.
 */

/** The archive's list and its feed: this many broadcasts a page, newest first. */
export const ARCHIVE_PAGE_SIZE = 20;
export const FEED_ENTRIES = 20;

export interface ArchiveOwner {
  id: string;
  name: string;
  slug: string;
  locale: Locale;
  brandColor: string | null;
}

/** A message rendered for a browser: the whole HTML document, and its subject. */
export interface BrowserMessage {
  owner: ArchiveOwner;
  subject: string;
  html: string;
  sentAt: string | null;
}

/** Characters XML 1.0 does not allow (C0 controls but tab, line feed, carriage return; lone surrogates; U+FFFE/F). */
const NOT_XML =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const xmlText = (s: string) => s.replace(NOT_XML, '');

export class ArchiveService {
  constructor(
    private readonly db: Db,
    private readonly settings: { publicUrl: string; secret: Buffer },
  ) {}

  private get base(): string {
    return this.settings.publicUrl.replace(/\/+$/, '');
  }

  archiveUrl(slug: string): string {
    return `${this.base}/archive/${slug}`;
  }

  private async owner(slug: string): Promise<ArchiveOwner> {
    const ws = await workspaceBySlug(this.db.kysely, slug);
    if (!ws || !ws.slug) throw notFound('archive');
    return ownerOf(ws);
  }

  /** A page of the archive (1-based): its broadcasts, and whether a next page has more. */
  async list(
    slug: string,
    page: number,
  ): Promise<{ owner: ArchiveOwner; items: repo.ArchivedItem[]; hasNext: boolean }> {
    const owner = await this.owner(slug);
    const rows = await repo.listArchived(this.db.kysely, owner.id, {
      limit: ARCHIVE_PAGE_SIZE + 1,
      offset: (page - 1) * ARCHIVE_PAGE_SIZE,
    });
    return { owner, items: rows.slice(0, ARCHIVE_PAGE_SIZE), hasNext: rows.length > ARCHIVE_PAGE_SIZE };
  }

  /** An archived broadcast for an anonymous reader; 404 unless it is this workspace's, SENT and archived. */
  async archived(slug: string, broadcastId: string): Promise<BrowserMessage> {
    const owner = await this.owner(slug);
    const b = await repo.getArchived(this.db.kysely, owner.id, broadcastId);
    if (!b) throw notFound('broadcast');
    return this.anonymous(owner, b);
  }

  private async anonymous(owner: ArchiveOwner, b: Broadcast): Promise<BrowserMessage> {
    const ws = (await getWorkspace(this.db.kysely, owner.id))!;
    const rendered = render(b.emailContent, {
      // Nobody's data: every contact field is empty (nil), so `| default: "there"` shows its default.
      contact: { email: null, firstName: null, lastName: null, properties: {} },
      broadcast: { id: b.id, name: b.name },
      workspace: workspaceScope(ws),
      webversion_url: `${this.archiveUrl(owner.slug)}/${b.id}`,
      in_browser: true,
      // No unsubscribe_url: the footer block's unsubscribe line is left out ({% if unsubscribe_url %}).
    });
    // An empty unsubscribe URL is "already linked" for the footer's rule (message.assembly.ts): no unsubscribe line is
    // added; the postal address still is.
    const assembled = assembleContent(rendered, { unsubscribeUrl: '', workspace: ws });
    return {
      owner,
      subject: assembled.subject,
      html: assembled.html ?? textAsHtml(assembled.text),
      sentAt: b.sentAt,
    };
  }

  /** The web version of one delivery's message, or 404 (a token that does not verify, a deleted broadcast or contact). */
  async webversion(token: string): Promise<BrowserMessage> {
    const ref = readWebversionToken(this.settings.secret, token);
    if (!ref) throw notFound('message');
    const k = this.db.kysely;
    const d = await repo.deliveryForWebversion(k, ref.workspaceId, ref.deliveryId);
    if (!d) throw notFound('message');
    // A deleted contact's message is not shown again (its data is gone, as it should be).
    const [b, ws, contact] = await Promise.all([
      getBroadcast(k, ref.workspaceId, d.broadcastId, { automationMessages: true }),
      getWorkspace(k, ref.workspaceId),
      d.contactId ? getContact(k, ref.workspaceId, d.contactId) : undefined,
    ]);
    if (!b || !ws || !contact) throw notFound('message');
    // An A/B broadcast's recipient sees the variant they were sent.
    const message = withVariant(b, b.abTest, d.variant);
    const unsubscribeUrl = `${this.base}/unsubscribe/${d.unsubscribeToken}`;
    const rendered = render(message.emailContent, {
      contact: contactScope(contact),
      broadcast: { id: b.id, name: b.name },
      unsubscribe_url: unsubscribeUrl,
      webversion_url: webversionUrl(this.base, this.settings.secret, ref.workspaceId, ref.deliveryId),
      in_browser: true,
      workspace: workspaceScope(ws),
    });
    const assembled = assembleContent(rendered, { unsubscribeUrl, workspace: ws });
    return {
      owner: ownerOf(ws),
      subject: assembled.subject,
      html: assembled.html ?? textAsHtml(assembled.text),
      sentAt: b.sentAt,
    };
  }

  /** The archive's Atom feed (RFC 4287): the newest FEED_ENTRIES broadcasts, each with its anonymous HTML as content. */
  async feed(slug: string): Promise<string> {
    const owner = await this.owner(slug);
    const items = await repo.listArchived(this.db.kysely, owner.id, { limit: FEED_ENTRIES, offset: 0 });
    const archive = this.archiveUrl(owner.slug);
    const entries = [];
    for (const item of items) {
      const b = await repo.getArchived(this.db.kysely, owner.id, item.id);
      if (!b) continue;
      const message = await this.anonymous(owner, b);
      const text = htmlToText(message.html).replace(/\s+/g, ' ').trim();
      const summary = (b.emailContent.previewText?.trim() || text).slice(0, 300);
      entries.push({
        id: `tag:${new URL(this.base).host},${item.sentAt.slice(0, 10)}:${b.id}`,
        title: { '@_type': 'text', '#text': xmlText(message.subject || b.name) },
        link: { '@_rel': 'alternate', '@_type': 'text/html', '@_href': `${archive}/${b.id}` },
        published: item.sentAt,
        updated: item.sentAt,
        summary: { '@_type': 'text', '#text': xmlText(summary) },
        content: { '@_type': 'html', '#text': xmlText(message.html) },
      });
    }
    const doc = {
      '?xml': { '@_version': '1.0', '@_encoding': 'utf-8' },
      feed: {
        '@_xmlns': 'http://www.w3.org/2005/Atom',
        '@_xml:lang': owner.locale,
        id: `${archive}/feed.xml`,
        title: { '@_type': 'text', '#text': xmlText(owner.name) },
        updated: items[0]?.sentAt ?? new Date(0).toISOString(),
        link: [
          { '@_rel': 'self', '@_type': 'application/atom+xml', '@_href': `${archive}/feed.xml` },
          { '@_rel': 'alternate', '@_type': 'text/html', '@_href': archive },
        ],
        author: { name: xmlText(owner.name) },
        generator: 'Formcast',
        entry: entries,
      },
    };
    return new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true }).build(doc) as string;
  }
}

/** Whose page it is: the workspace's name, archive address, language and brand colour. */
function ownerOf(ws: {
  id: string;
  name: string;
  slug: string | null;
  settings: { locale: Locale; brandColor: string | null };
}): ArchiveOwner {
  return {
    id: ws.id,
    name: ws.name,
    slug: ws.slug ?? '',
    locale: ws.settings.locale,
    brandColor: ws.settings.brandColor,
  };
}

/**
 * A broadcast's templates rendered with these variables (the HTML body escapes every output, as a send does). The
 * render limit is wall-clock time (lib/liquid.ts): a render that reached it on a loaded machine is tried once more
 * before the page fails, as a send's retry would.
 */
function render(content: MessageTemplates, vars: Record<string, unknown>) {
  try {
    return renderOnce(content, vars);
  } catch (err) {
    if (!isRenderLimit(err)) throw err;
    return renderOnce(content, vars);
  }
}

function renderOnce(content: MessageTemplates, vars: Record<string, unknown>) {
  return {
    subject: renderTemplate(content.subject, vars),
    html: renderTemplate(content.html, vars, 'html'),
    text: renderTemplate(content.text, vars),
    previewText: renderTemplate(content.previewText, vars),
  };
}

/** A text-only message as a page: its text, escaped, in a preformatted block. */
function textAsHtml(text: string): string {
  const e = escapeHtml(text);
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"></head><body><pre style="white-space:pre-wrap;font-family:inherit;max-width:40rem;margin:2rem auto;padding:0 1rem">${e}</pre></body></html>`;
}
