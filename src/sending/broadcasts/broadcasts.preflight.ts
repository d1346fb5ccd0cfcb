import crypto from 'node:crypto';
import type { FieldError } from '../../errors/errors.js';
import type { DocumentWarning } from '../../mail/documents.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { encodedHtmlBytes } from '../../mail/mime.js';
import { composeMessage, prepareBroadcast } from '../deliveries/message.js';
import type { SendingBroadcast } from '../deliveries/store.js';
import { RENDER_LIMIT_MS, isRenderLimit } from '../../lib/liquid.js';
import type { Broadcast } from './broadcasts.schemas.js';
import { renderContent, type RenderScope } from '../deliveries/message.content.js';
import { IMAGE_ONLY_HTML_CHARS } from '../tracking/tracking.rewrite.js';

/**
 * Preflight (docs/bounces.md): what to know before a broadcast goes out, as checks `{ id, status, detail }`.
 * A `fail` blocks scheduling and sending (422 broadcast_incomplete, the failing checks in `errors`); a `warn`
 * is advice. The checks that can fail are cheap and run at every schedule and send (`blockingChecks`); those
 * that look at DNS, the audience and the content in detail only warn, and run when preflight is asked for.
 */
export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface Check {
  id: string;
  status: CheckStatus;
  detail: string;
}

/** Stand-in recipient for previews without a contact. */
export const SAMPLE_CONTACT: RenderScope['contact'] = {
  email: 'jane.doe@example.com',
  firstName: 'Jane',
  lastName: 'Doe',
  properties: {},
};

/** Stand-in workspace for the render check of blockingChecks (previews and sends use the real one). */
export const SAMPLE_WORKSPACE: RenderScope['workspace'] = {
  name: 'Acme',
  postal_address: '1 Main Street, Springfield',
};

/** Gmail clips an HTML body larger than this (the "[Message clipped]" link), hiding the footer. */
export const GMAIL_CLIP_BYTES = 102 * 1024;

const ok = (id: string, detail: string): Check => ({ id, status: 'pass', detail });
const warn = (id: string, detail: string): Check => ({ id, status: 'warn', detail });
const fail = (id: string, detail: string): Check => ({ id, status: 'fail', detail });

/** The checks that can fail: the content is complete and renders, the sender's domain is verified. */
export function blockingChecks(
  b: Pick<Broadcast, 'id' | 'name' | 'from' | 'emailContent'>,
  senderVerified: boolean | null,
): Check[] {
  const checks: Check[] = [];
  const c = b.emailContent;
  checks.push(b.from ? ok('from', `sent from ${b.from}`) : fail('from', '/from is required to send'));
  checks.push(
    c.subject?.trim()
      ? ok('subject', 'has a subject')
      : fail('subject', '/emailContent/subject must not be empty to send'),
  );
  checks.push(
    c.html?.trim() || c.text?.trim()
      ? ok('body', c.html?.trim() ? 'has an HTML body' : 'has a text body')
      : fail('body', '/emailContent needs html or text to send'),
  );
  if (b.from)
    checks.push(
      senderVerified
        ? ok('sender_domain', "the sender's domain is a verified sending domain of the workspace")
        : fail('sender_domain', "the sender's domain is not a verified sending domain of the workspace"),
    );
  try {
    renderContent(c, {
      contact: SAMPLE_CONTACT,
      broadcast: { id: b.id, name: b.name },
      unsubscribe_url: 'https://example.invalid/unsubscribe/preview',
      workspace: SAMPLE_WORKSPACE,
    });
    checks.push(ok('render', 'renders for sample data'));
  } catch (err) {
    checks.push(
      isRenderLimit(err)
        ? fail('render', `/emailContent takes longer than ${RENDER_LIMIT_MS} ms to render`)
        : warn(
            'render',
            `does not render for sample data: ${(err as Error).message.split('\n')[0]} (a contact's data may differ)`,
          ),
    );
  }
  return checks;
}

/**
 * An A/B broadcast's variant (docs/ab-tests.md): the blocking checks of its message (the broadcast with the variant
 * applied), as one `ab_variant_<id>` check that passes, or one per problem pointing at the variant
 * (`/abTest/variants/<i>`), so that a 422 broadcast_incomplete names it.
 */
export function variantChecks(index: number, id: string, checks: Check[]): Check[] {
  const problems = checks.filter((c) => c.status !== 'pass');
  if (!problems.length) return [ok(`ab_variant_${id}`, `variant ${id} is complete and renders`)];
  return problems.map((c) => ({
    id: `ab_variant_${id}_${c.id}`,
    status: c.status,
    detail: `/abTest/variants/${index} (variant ${id}) ${c.detail.replace(/^\/[^\s]+\s*/, '')}`,
  }));
}

/** The path a failing check points at, for the 422's `errors`. */
export function checkErrors(checks: Check[]): FieldError[] {
  return checks
    .filter((c) => c.status === 'fail')
    .map((c) => {
      const path =
        /^(\/[^\s]+)/.exec(c.detail)?.[1] ?? (c.id === 'sender_domain' || c.id === 'from' ? '/from' : '/emailContent');
      return { path, message: c.detail.replace(/^\/[^\s]+\s*/, ''), keyword: `preflight_${c.id}` };
    });
}

/** Contact fields the templates print without a `| default:`, as segment filter fields (for counting who lacks them). */
export function bareVariables(c: Broadcast['emailContent']): string[] {
  const found = new Set<string>();
  for (const source of [c.subject, c.html, c.text, c.previewText]) {
    if (!source) continue;
    for (const m of source.matchAll(
      /\{\{-?\s*contact\.(firstName|lastName|properties\.([A-Za-z][A-Za-z0-9_]{0,63}))\s*(\|[^}]*)?-?\}\}/g,
    )) {
      if (/\|\s*default\b/.test(m[3] ?? '')) continue;
      found.add(m[1]!.startsWith('properties.') ? m[1]! : m[1]!);
    }
  }
  return [...found];
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * The HTML part of the message the delivery pipeline would compose for a sample recipient (deliveries/message.ts, the
 * same code): with real-sized ids and tokens, so its size is that of a real one. The key and the secret are stand-ins:
 * nothing is signed or sent. Null when the broadcast cannot be composed (no From; the blocking checks say why).
 */
export function sentHtml(
  publicUrl: string,
  sending: Omit<SendingBroadcast, 'dkim'> & { senderDomain: string },
): { html: string; sentBytes: number; pixel: boolean | null } | null {
  const p = prepareBroadcast({
    ...sending,
    dkim: { domainName: sending.senderDomain, keySelector: 'preflight', privateKey: '' },
  });
  if (!p.from) return null;
  const m = composeMessage(
    { publicUrl, secret: crypto.randomBytes(32), relayProfile: 'smtp' },
    {
      id: newId('dlv'),
      workspaceId: sending.workspace.id,
      broadcastId: sending.broadcast.id,
      contactId: newId('ct'),
      email: SAMPLE_CONTACT.email,
      attempts: 0,
      unsubscribeToken: crypto.randomBytes(24).toString('base64url'),
      createdAt: nowIso(),
    },
    p,
    SAMPLE_CONTACT,
  );
  if (m.html === null) return null;
  return {
    html: m.html,
    sentBytes: encodedHtmlBytes(m.html),
    pixel: sending.broadcast.tracking.opens ? m.html.includes('/t/o/') : null,
  };
}

/**
 * Content checks of the HTML part as a recipient gets it (sample data): the document with its preheader and footer,
 * its links rewritten for click tracking and the open pixel (`sent`, what the delivery pipeline composes), measured as
 * it goes on the wire (`sentBytes`, after the transfer encoding) against Gmail's clipping size; images without alt text
 * and plain-http links in the author's HTML (`html`); whether the open pixel is in (`pixel`: null when opens are not
 * tracked).
 */
export function contentChecks(
  html: string | null,
  sent?: { html: string; sentBytes: number; pixel: boolean | null },
): Check[] {
  if (html === null) return [ok('html_size', 'text only')];
  const checks: Check[] = [];
  const bytes = sent?.sentBytes ?? Buffer.byteLength(html, 'utf8');
  const what = sent
    ? `the HTML part as sent (with the footer, the tracked links and the pixel, encoded for transfer) is ${kb(bytes)}`
    : `the HTML is ${kb(bytes)}`;
  checks.push(
    bytes > GMAIL_CLIP_BYTES
      ? warn(
          'html_size',
          `${what}: Gmail clips messages over 102 KB and hides the rest, the unsubscribe footer included${sent && Buffer.byteLength(html, 'utf8') <= GMAIL_CLIP_BYTES ? ` (the template alone is ${kb(Buffer.byteLength(html, 'utf8'))}: tracking and the footer add the rest; shorter links or fewer of them help)` : ''}`,
        )
      : ok('html_size', `${what} (Gmail clips over 102 KB)`),
  );
  if (sent && sent.pixel !== null)
    checks.push(
      sent.pixel
        ? ok('open_pixel', 'opens are counted: the message carries the open pixel')
        : warn(
            'open_pixel',
            `opens will not be counted: the message is too short (${IMAGE_ONLY_HTML_CHARS} characters of HTML or less) and has no image, and an image in it would make spam filters score it as an image-only message (docs/tracking.md)`,
          ),
    );
  const images = [...html.matchAll(/<img\b[^>]*>/gi)].map((m) => m[0]);
  const noAlt = images.filter((tag) => !/\balt\s*=\s*("[^"]*\S[^"]*"|'[^']*\S[^']*'|[^\s>"']+)/i.test(tag));
  checks.push(
    noAlt.length
      ? warn(
          'images_alt',
          `${noAlt.length} of ${images.length} ${images.length === 1 ? 'image has' : 'images have'} no alt text: readers who block images, and the text part, see nothing for them`,
        )
      : ok('images_alt', images.length ? 'every image has alt text' : 'no images'),
  );
  const http = [...new Set([...html.matchAll(/\bhref\s*=\s*["']?(http:\/\/[^"'\s>]+)/gi)].map((m) => m[1]!))];
  checks.push(
    http.length
      ? warn(
          'http_links',
          `${http.length} ${http.length === 1 ? 'link uses' : 'links use'} plain http (e.g. ${http.slice(0, 3).join(', ')}): use https`,
        )
      : ok('http_links', 'every link uses https'),
  );
  return checks;
}

/**
 * The block document's checks (contract §16): each kind of the renderer's warnings (an image without alt text, a button
 * without a link, an empty block, a missing footer) one `document_<code>` warning naming the blocks' pointers; a
 * document with none passes `document`.
 */
export function documentChecks(warnings: readonly DocumentWarning[]): Check[] {
  if (!warnings.length) return [ok('document', 'the block document has nothing to look at')];
  const byCode = new Map<string, DocumentWarning[]>();
  for (const w of warnings) byCode.set(w.code, [...(byCode.get(w.code) ?? []), w]);
  return [...byCode].map(([code, list]) => {
    const at = list.map((w) => `/emailContent/editorContent${w.path}`);
    const where = at.length > 5 ? `${at.slice(0, 5).join(', ')} and ${at.length - 5} more` : at.join(', ');
    return warn(
      `document_${code}`,
      list.length === 1 ? `${list[0]!.message} (${where})` : `${list.length} blocks: ${list[0]!.message} (${where})`,
    );
  });
}

export const pass = ok;
export const warning = warn;
