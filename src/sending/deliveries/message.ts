import { assembleContent, listHeaders } from './message.assembly.js';
import { prepareContent, type RenderScope, type RenderedContent } from './message.content.js';
import { parseMailbox } from '../../lib/email.js';
import { htmlToText, type Address, type OutgoingMessage } from '../../mail/compose.js';
import { workspaceScope } from '../../mail/documents.js';
import { deliveryTagHeaders, forRelay, relayProfile, type RelayProfileName } from '../../mail/relay-profiles.js';
import { returnPath, unsubscribeAddress } from '../../mail/verp.js';
import { trackMessage } from '../tracking/tracking.message.js';
import { unmarkLinks } from '../tracking/tracking.template.js';
import type { ClaimedDelivery, SendingBroadcast, TransactionalParts } from './store.js';
import { webversionUrl } from './webversion.js';

/**
 * One delivery's message, from its broadcast and its recipient (deliveries/CONTEXT.md, "Render"). Pure: the same
 * code runs in the pipeline's thread and in the send threads (send-threads.ts, render.worker.ts).
 */

/** What every message of a process shares. */
export interface MessageContext {
  publicUrl: string;
  /** Signs the VERP, unsubscribe, web version and tracking tokens (db/secrets.ts). */
  secret: Buffer;
  /** What the relay does to a message (mail/relay-profiles.ts): what is signed, which headers are added. */
  relayProfile: RelayProfileName;
}

/** The recipient's data the templates see. */
export type MessageRecipient = RenderScope['contact'];

export interface PreparedBroadcast extends SendingBroadcast {
  /** From and Reply-To parsed once; null when the stored text no longer parses (the delivery fails). */
  from: Address | null;
  replyTo: Address | null;
  render: (scope: RenderScope) => RenderedContent;
  senderDomain: string | null;
}

/** The broadcast's templates parsed and its addresses read, once per broadcast (and per version of it). */
export function prepareBroadcast(sending: SendingBroadcast): PreparedBroadcast {
  const b = sending.broadcast;
  const from = b.from ? parseMailbox(b.from) : null;
  const replyTo = b.replyTo ? parseMailbox(b.replyTo) : null;
  return {
    ...sending,
    from: from ? { name: from.name, address: from.address } : null,
    replyTo: replyTo ? { name: replyTo.name, address: replyTo.address } : null,
    // A transactional email's content was rendered when it was accepted (docs/emails.md): sent as it is, never parsed again.
    render: sending.transactional
      ? () => ({ ...b.emailContent, linksMarked: false })
      : prepareContent(b.emailContent, { markLinks: b.tracking.clicks }),
    senderDomain: from?.domain ?? null,
  };
}

/** The message of one delivery; throws when its templates cannot be rendered. The broadcast has a signing key and a From. */
export function composeMessage(
  ctx: MessageContext,
  d: ClaimedDelivery,
  p: PreparedBroadcast,
  contact: MessageRecipient,
): OutgoingMessage {
  if (p.transactional) return composeTransactional(ctx, d, p, p.transactional);
  const unsubscribeUrl = `${ctx.publicUrl}/unsubscribe/${d.unsubscribeToken}`;
  let webversion: string | undefined;
  const rendered = p.render({
    contact: {
      email: contact.email,
      firstName: contact.firstName,
      lastName: contact.lastName,
      properties: contact.properties,
    },
    broadcast: { id: p.broadcast.id, name: p.broadcast.name },
    unsubscribe_url: unsubscribeUrl,
    // Signed only when a template prints it (an HMAC: ~30 µs a message that most templates would not use).
    get webversion_url() {
      return (webversion ??= webversionUrl(ctx.publicUrl, ctx.secret, d.workspaceId, d.id));
    },
    workspace: workspaceScope(p.workspace),
  });
  // Engagement tracking (docs/tracking.md): links of the template rewritten before the footer is added (its links
  // stay as they are), the text part made from the HTML as written, the pixel at the end of the whole document.
  const tracked = rendered.html != null ? messageTracking(ctx, d, p, unsubscribeUrl) : null;
  // The HTML as written (its tracked links' marks, if any, taken out): what the text part is made from.
  const written = () => (rendered.linksMarked && rendered.html != null ? unmarkLinks(rendered.html) : rendered.html);
  const content = tracked
    ? tracked.pixel(
        assembleContent(
          {
            ...rendered,
            html: tracked.links(rendered.html!, rendered.linksMarked),
            text: rendered.text ?? htmlToText(written()!),
          },
          { unsubscribeUrl, workspace: p.workspace },
        ),
      )
    : assembleContent({ ...rendered, html: written() }, { unsubscribeUrl, workspace: p.workspace });
  const domain = p.dkim!.domainName;
  const relay = relayProfile(ctx.relayProfile);
  return forRelay(
    {
      from: p.from!,
      to: d.email,
      replyTo: p.replyTo,
      returnPath: returnPath(ctx.secret, 'd', d.id, domain),
      ...content,
      // Stable per delivery: a message sent again after a crash carries the same Message-ID.
      messageId: `<${d.id}@${domain}>`,
      headers: {
        ...listHeaders({
          unsubscribeUrl,
          unsubscribeMailto: unsubscribeAddress(ctx.secret, d.id, domain),
          listName: p.topic?.name ?? p.workspace.name,
          listId: `${(p.topic?.id ?? 'all').toLowerCase().replace(/_/g, '-')}.${p.workspace.id.toLowerCase().replace(/_/g, '-')}.${domain}`,
          feedbackId: `${p.broadcast.id}:${p.workspace.id}:formcast`,
        }),
        ...deliveryTagHeaders(relay, d.id),
      },
      dkim: p.dkim,
    },
    relay,
  );
}

/**
 * A transactional email's message to one of its recipients (docs/emails.md): the content as the caller gave it (rendered
 * when accepted), no footer and no list headers (List-Unsubscribe only if the caller's headers carry one), the To and
 * Cc headers listing the visible recipients (Bcc never), the caller's headers and attachments; the envelope as for a
 * broadcast: this recipient alone, the VERP Return-Path, the Message-ID `<deliveryId@domain>`, DKIM.
 */
function composeTransactional(
  ctx: MessageContext,
  d: ClaimedDelivery,
  p: PreparedBroadcast,
  parts: TransactionalParts,
): OutgoingMessage {
  const c = p.broadcast.emailContent;
  const tracked =
    c.html != null ? messageTracking(ctx, d, p, `${ctx.publicUrl}/unsubscribe/${d.unsubscribeToken}`) : null;
  const text = c.text ?? (c.html != null ? htmlToText(c.html) : '');
  const html = tracked && c.html != null ? tracked.pixel({ html: tracked.links(c.html) }).html : c.html;
  const domain = p.dkim!.domainName;
  const relay = relayProfile(ctx.relayProfile);
  return forRelay(
    {
      from: p.from!,
      to: d.email,
      toHeader: mailboxes(parts.to),
      cc: mailboxes(parts.cc),
      replyTo: p.replyTo,
      returnPath: returnPath(ctx.secret, 'd', d.id, domain),
      subject: (c.subject ?? '').replace(/[\r\n]+/g, ' ').trim(),
      html,
      text,
      messageId: `<${d.id}@${domain}>`,
      headers: { ...deliveryTagHeaders(relay, d.id) },
      customHeaders: parts.headers,
      attachments: parts.attachments,
      dkim: p.dkim,
    },
    relay,
  );
}

/** Mailboxes as the transport takes them (checked when the email was accepted; one that no longer parses is left out). */
function mailboxes(list: readonly string[]): Address[] {
  const out: Address[] = [];
  for (const m of list) {
    const parsed = parseMailbox(m);
    if (parsed) out.push({ name: parsed.name, address: parsed.address });
  }
  return out;
}

/** The message's tracking (docs/tracking.md), or null when neither opens nor clicks are tracked. */
function messageTracking(ctx: MessageContext, d: ClaimedDelivery, p: PreparedBroadcast, unsubscribeUrl: string) {
  const tracking = p.broadcast.tracking;
  if (!tracking.opens && !tracking.clicks) return null;
  return trackMessage(
    {
      secret: ctx.secret,
      publicUrl: ctx.publicUrl,
      // The sending domain's verified tracking host, over https (its proxy terminates TLS): links and the pixel
      // align with the From domain and are not shared with the installation's other senders.
      ...(p.trackingHost ? { trackingUrl: `https://${p.trackingHost}` } : {}),
      unsubscribeUrl,
      opens: tracking.opens,
      clicks: tracking.clicks,
    },
    {
      workspaceId: d.workspaceId,
      deliveryId: d.id,
      broadcastId: d.broadcastId,
      contactId: d.contactId,
      sentAt: Math.floor(Date.now() / 1000),
    },
  );
}
