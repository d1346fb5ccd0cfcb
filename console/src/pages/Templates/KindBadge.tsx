import { StatusBadge } from '../../components';
import { isBlockDocument, type Template } from '../../lib/templates';

/** Whether a template is a visual email (a block document) or HTML. */
export function KindBadge({ template }: { template: Template }) {
  return isBlockDocument(template.editorContent) ? (
    <StatusBadge status="visual" tone="info" label="Visual" />
  ) : (
    <StatusBadge status="html" tone="neutral" label="HTML" />
  );
}
