import type { FastifyBaseLogger } from 'fastify';
import { contactEmail, getContact } from '../../audience/index.js';
import type { Db } from '../../db/connection.js';
import { firstVerifiedDomain, getSigningKey, type SigningKey, getTemplate } from '../../mail-setup/index.js';
import { getForm } from '../forms/forms.repository.js';
import { renderTemplate } from '../../lib/liquid.js';
import { asDocument } from '../../lib/html.js';
import { parseMailbox } from '../../lib/email.js';
import { htmlToText, type OutgoingMessage } from '../../mail/compose.js';
import { workspaceScope, type WorkspaceScope } from '../../mail/documents.js';
import { returnPath } from '../../mail/verp.js';
import { TEXTS } from '../../pages/i18n.js';
import { type Locale, getWorkspace } from '../../access/index.js';
import type { Mailer } from '../../mail/transport.js';
import * as repo from './submissions.repository.js';

/** The confirmation email when a form names no template of its own (doubleOptInEmailId null), in the workspace's locale. */
export function builtInConfirmation(locale: Locale): { subject: string; html: string; text: string | null } {
  // Our own words, with no Liquid syntax in them; `{name}` becomes the form's public heading (its `name` is
  // internal and never shown to the people who sign up), or the workspace's name when it has none.
  const t = TEXTS[locale];
  return {
    subject: t.confirmEmailSubject.replace('{name}', '{{ form.heading }}'),
    html:
      `<p>${t.confirmEmailHello}{% if contact.firstName %} {{ contact.firstName }}{% endif %},</p>` +
      `<p>${t.confirmEmailText}</p>` +
      `<p><a href="{{ confirm_url }}">${t.confirmButton}</a></p>` +
      `<p>${t.confirmEmailIgnore}</p>`,
    text: null,
  };
}

/** What one confirmation email is made of, read from the database by ConfirmationSender. */
export interface ConfirmationParts {
  source: { subject: string | null; html: string | null; text: string | null };
  locale: Locale;
  contact: { email: string; firstName: string | null; lastName: string | null; properties: Record<string, unknown> };
  form: { id: string; name: string; heading: string };
  /** `{{ workspace.name }}` and `{{ workspace.postal_address }}` (a block document's footer prints the address). */
  workspace: WorkspaceScope;
  confirmUrl: string;
  from: { name: string; address: string; domain: string };
  returnPath: string;
  messageId: string;
  key: SigningKey | null;
}

/**
 * The confirmation email for the transport: the template rendered with `contact`, `form`, `workspace` and
 * `confirm_url` in its scope, DKIM-signed with `key`.
 */
export function confirmationMessage(p: ConfirmationParts): OutgoingMessage {
  const scope = { contact: p.contact, form: p.form, workspace: p.workspace, confirm_url: p.confirmUrl };
  const subject = renderTemplate(p.source.subject ?? 'Please confirm your subscription', scope);
  const html = renderTemplate(p.source.html, scope, 'html');
  const text = renderTemplate(p.source.text, scope);
  return {
    from: { name: p.from.name, address: p.from.address },
    to: p.contact.email,
    replyTo: null,
    returnPath: p.returnPath,
    subject: (subject ?? '').replace(/[\r\n]+/g, ' '),
    html: html === null ? null : asDocument(html, subject ?? '', p.locale),
    text: text ?? (html ? htmlToText(html) : scope.confirm_url),
    messageId: p.messageId,
    headers: { 'Auto-Submitted': 'auto-generated' },
    dkim: p.key ? { domainName: p.key.domain, keySelector: p.key.selector, privateKey: p.key.privateKey } : null,
  };
}

const MAX_ATTEMPTS = 8;
const RETRY_MS = 60_000;

/**
 * Sends the double opt-in emails the submissions created (a worker job, so a slow or failing SMTP server
 * never fails a sign-up): from the workspace's `defaultFrom` when it is on a verified domain, else from
 * no-reply@ its oldest verified domain named after the workspace; DKIM-signed, with a VERP Return-Path (a
 * bounce of it is read like any other), with `confirm_url` in the template's scope. Failures are retried a
 * minute later, a few times.
 */
export class ConfirmationSender {
  constructor(
    private readonly db: Db,
    private readonly mailer: Mailer,
    private readonly publicUrl: string,
    private readonly log: FastifyBaseLogger,
    private readonly secret: Buffer,
  ) {}

  async sendDue(limit = 20): Promise<number> {
    const k = this.db.kysely;
    const now = Date.now();
    const due = await repo.claimDueConfirmations(
      k,
      new Date(now).toISOString(),
      new Date(now + RETRY_MS).toISOString(),
      MAX_ATTEMPTS,
      limit,
    );
    // What the emails of a round share (a spike's sign-ups are mostly one form's) is read once for the round.
    const round = new Map<string, Promise<unknown>>();
    for (const c of due) {
      try {
        await this.send(c, round);
        await repo.markConfirmationEmail(k, c.workspaceId, c.id, { sentAt: new Date().toISOString() });
      } catch (err) {
        this.log.warn({ err, confirmationId: c.id }, 'confirmation email failed; will retry');
        await repo.markConfirmationEmail(k, c.workspaceId, c.id, { error: (err as Error).message });
      }
    }
    return due.length;
  }

  private async send(c: repo.ConfirmationRecord, round: Map<string, Promise<unknown>>): Promise<void> {
    const k = this.db.kysely;
    const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
      let p = round.get(key) as Promise<T> | undefined;
      if (!p) round.set(key, (p = read()));
      return p;
    };
    const ws = c.workspaceId;
    const [contact, form, workspace] = await Promise.all([
      getContact(k, ws, c.contactId),
      // No form: a re-subscription from the unsubscribe page, in the built-in words, under the workspace's name.
      c.formId ? once(`form:${ws}:${c.formId}`, () => getForm(k, ws, c.formId!)) : Promise.resolve(null),
      once(`workspace:${ws}`, () => getWorkspace(k, ws)),
    ]);
    if (!contact || form === undefined || !workspace) throw new Error('the contact, the form or the workspace is gone');
    if (contactEmail(contact.email) !== contact.email)
      throw new Error('the stored address is not a valid single address');
    const from = await once(`from:${ws}`, () => this.sender(ws, workspace.name, workspace.settings.defaultFrom));
    if (!from) throw new Error('the workspace has no verified sending domain to send the confirmation from');
    const key = await once(`key:${ws}:${from.domain}`, () => getSigningKey(k, ws, from.domain, this.secret));
    const template = form?.doubleOptInEmailId
      ? await once(`template:${ws}:${form.doubleOptInEmailId}`, () => getTemplate(k, ws, form.doubleOptInEmailId!))
      : undefined;
    await this.mailer.send(
      confirmationMessage({
        source: template ?? builtInConfirmation(workspace.settings.locale),
        locale: workspace.settings.locale,
        contact: {
          email: contact.email,
          firstName: contact.firstName,
          lastName: contact.lastName,
          properties: contact.properties,
        },
        form: form
          ? { id: form.id, name: form.name, heading: form.settings.appearance?.heading ?? workspace.name }
          : { id: '', name: '', heading: workspace.name },
        workspace: workspaceScope(workspace),
        confirmUrl: `${this.publicUrl}/confirm/${c.token}`,
        from,
        returnPath: returnPath(this.secret, 'c', c.id, from.domain),
        messageId: `<${c.id}.${c.attempts}@${from.domain}>`,
        key: key ?? null,
      }),
    );
  }

  /** The workspace's defaultFrom while its domain is verified; otherwise no-reply@ the oldest verified domain. */
  private async sender(
    workspaceId: string,
    workspaceName: string,
    defaultFrom: string | null,
  ): Promise<{ name: string; address: string; domain: string } | null> {
    const configured = defaultFrom ? parseMailbox(defaultFrom) : null;
    if (configured && (await getSigningKey(this.db.kysely, workspaceId, configured.domain, this.secret))) {
      return {
        name: configured.name ?? workspaceName.replace(/[\r\n]+/g, ' '),
        address: configured.address,
        domain: configured.domain,
      };
    }
    const domain = await firstVerifiedDomain(this.db.kysely, workspaceId);
    return domain ? { name: workspaceName.replace(/[\r\n]+/g, ' '), address: `no-reply@${domain}`, domain } : null;
  }
}
