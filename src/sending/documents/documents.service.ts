import { WEBVERSION_PREVIEW_PATH } from '../deliveries/webversion.js';
import { getWorkspace } from '../../access/index.js';
import { getContact } from '../../audience/index.js';
import type { Db } from '../../db/connection.js';
import { DomainError, notFound, validationFailed } from '../../errors/errors.js';
import type { BlockDocument } from '../../mail/blocks/grammar.js';
import { validateDocument } from '../../mail/blocks/validate.js';
import { renderBlocks, workspaceScope, type DocumentSettings } from '../../mail/documents.js';
import { SAMPLE_CONTACT } from '../broadcasts/broadcasts.preflight.js';
import { assembleContent } from '../deliveries/message.assembly.js';
import { renderContent } from '../deliveries/message.content.js';
import type { RenderDocumentInput, RenderedDocumentView } from './documents.schemas.js';

/**
 * Email documents (contract §16; docs/email-documents-api.md): a block document rendered for a preview, saving nothing.
 * The same steps as a send of it: the document rendered as a write renders it, its Liquid filled for one contact (or
 * the broadcast preview's sample data), then assembled as a message is (the workspace's locale as `lang`).
 */
export class DocumentsService {
  constructor(
    private readonly db: Db,
    private readonly settings: DocumentSettings,
  ) {}

  async render(workspaceId: string, input: RenderDocumentInput): Promise<RenderedDocumentView> {
    const errors = validateDocument(input.editorContent, '/editorContent');
    if (errors.length) throw validationFailed(errors);
    const k = this.db.kysely;
    let contact = SAMPLE_CONTACT;
    if (input.contactId !== undefined) {
      // Another workspace's contact is answered as a missing one (contract §2).
      const found = await getContact(k, workspaceId, input.contactId);
      if (!found) throw notFound('contact');
      contact = found;
    }
    const workspace = await getWorkspace(k, workspaceId);
    if (!workspace) throw notFound('workspace');
    const rendered = await renderBlocks(input.editorContent as BlockDocument, this.settings, workspace.settings.locale);
    const unsubscribeUrl = `${this.settings.publicUrl}/unsubscribe/preview`;
    try {
      const personal = renderContent(
        { subject: null, html: rendered.html, text: rendered.text, previewText: null },
        {
          contact: {
            email: contact.email,
            firstName: contact.firstName,
            lastName: contact.lastName,
            properties: contact.properties,
          },
          broadcast: { id: '', name: '' },
          unsubscribe_url: unsubscribeUrl,
          webversion_url: `${this.settings.publicUrl}${WEBVERSION_PREVIEW_PATH}`,
          workspace: workspaceScope(workspace),
        },
      );
      const assembled = assembleContent(personal, { unsubscribeUrl, workspace });
      return { html: assembled.html ?? '', text: assembled.text, warnings: rendered.warnings };
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw validationFailed([
        { path: '/editorContent', message: `cannot be rendered: ${(err as Error).message.split('\n')[0]}` },
      ]);
    }
  }
}
