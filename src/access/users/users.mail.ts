import type { Db } from '../../db/connection.js';
import { firstVerifiedDomain, getSigningKey } from '../../mail-setup/index.js';
import { escapeHtml } from '../../lib/html.js';
import { parseMailbox } from '../../lib/email.js';
import type { Mailer } from '../../mail/transport.js';
import { returnPath } from '../../mail/verp.js';
import { getWorkspace } from '../workspaces/workspaces.repository.js';

/**
 * The console's own emails (invitations, password resets): sent at once through the process's mailer, from
 * the workspace's `defaultFrom` while its domain is verified, else from no-reply@ its oldest verified domain,
 * DKIM-signed, with a VERP Return-Path of the test-send kind (a bounce of it is accepted and ignored: it is a
 * person's address, not a contact's). Without a mailer or a verified domain nothing is sent (false).
 */
export class ConsoleMail {
  constructor(
    private readonly db: Db,
    private readonly mailer: Mailer | undefined,
    private readonly secret: Buffer,
  ) {}

  async send(
    workspaceId: string,
    id: string,
    to: string,
    subject: string,
    paragraphs: string[],
    link: { url: string; label: string },
  ): Promise<boolean> {
    if (!this.mailer) return false;
    const k = this.db.kysely;
    const workspace = await getWorkspace(k, workspaceId);
    if (!workspace) return false;
    const name = workspace.name.replace(/[\r\n]+/g, ' ');
    const configured = workspace.settings.defaultFrom ? parseMailbox(workspace.settings.defaultFrom) : null;
    let from: { name: string; address: string; domain: string } | null = null;
    if (configured && (await getSigningKey(k, workspaceId, configured.domain, this.secret)))
      from = { name: configured.name ?? name, address: configured.address, domain: configured.domain };
    if (!from) {
      const domain = await firstVerifiedDomain(k, workspaceId);
      if (domain) from = { name, address: `no-reply@${domain}`, domain };
    }
    if (!from) return false;
    const key = await getSigningKey(k, workspaceId, from.domain, this.secret);
    const html =
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>` +
      paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('') +
      `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p></body></html>\n`;
    await this.mailer.send({
      from: { name: from.name, address: from.address },
      to,
      replyTo: null,
      returnPath: returnPath(this.secret, 't', id, from.domain),
      subject: subject.replace(/[\r\n]+/g, ' '),
      html,
      text: `${paragraphs.join('\n\n')}\n\n${link.label}: ${link.url}\n`,
      messageId: `<${id}@${from.domain}>`,
      headers: { 'Auto-Submitted': 'auto-generated' },
      dkim: key ? { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey } : null,
    });
    return true;
  }
}
