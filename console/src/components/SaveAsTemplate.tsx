/**
 * "Save as template": any email's content (a broadcast's, an automation step's, a template's) kept under a name with
 * POST /v1/templates, to start other emails from (the gallery lists it under "Your templates"). A button that opens a
 * small dialog asking for the name; shown only to those who may write templates (write:broadcasts).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { createPortal } from 'react-dom';
import { templateKeys } from '../api/keys';
import { useCan } from '../api/session';
import { api, unwrap } from '../api/client';
import { isBlockDocument, type EmailContent, type Template } from '../lib/templates';
import { problemOf } from '../lib/forms';
import { Button, type ButtonVariant } from './Button';
import { Dialog } from './Dialog';
import { ErrorSummary, Input } from './Field';
import { useToast } from './Toast';

export interface SaveAsTemplateProps {
  /** The email to keep: its subject, html, text and editorContent (previewText is not part of a template). */
  content: EmailContent;
  /** The name the dialog proposes ("Copy of March news"). */
  defaultName?: string;
  /** The button's label ("Save as template"). */
  label?: string;
  variant?: ButtonVariant;
  size?: 'md' | 'sm';
  disabled?: boolean;
  /** After the template is created (a toast says so too). */
  onSaved?: (template: Template) => void;
}

/** The body of POST /v1/templates for an email's content: a block document is sent as such (the service renders it). */
export function templateBody(name: string, content: EmailContent) {
  const doc = isBlockDocument(content.editorContent);
  return {
    name,
    subject: content.subject || null,
    html: doc ? null : content.html || null,
    text: doc ? null : content.text || null,
    ...(content.editorContent != null ? { editorContent: content.editorContent } : {}),
  };
}

export function SaveAsTemplate({
  content,
  defaultName = '',
  label = 'Save as template',
  variant = 'secondary',
  size = 'md',
  disabled = false,
  onSaved,
}: SaveAsTemplateProps) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(defaultName);
  const save = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/templates', { body: templateBody(name.trim(), content) })),
    onSuccess: (t) => {
      void qc.invalidateQueries({ queryKey: templateKeys.all });
      toast.success(`Saved as template “${t.name}”.`);
      setOpen(false);
      onSaved?.(t);
    },
  });
  if (!can('write:broadcasts')) return null;
  const { fields, message, rest } = problemOf(save.error, { '/name': 'Template name' });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    // The button may sit inside the page's own form: React passes events up the component tree, portal or not.
    e.stopPropagation();
    if (name.trim()) save.mutate();
  };
  return (
    <>
      <Button
        variant={variant}
        size={size}
        disabled={disabled}
        onClick={() => {
          save.reset();
          setName(defaultName);
          setOpen(true);
        }}
      >
        {label}
      </Button>
      {createPortal(
        <Dialog
          open={open}
          title="Save as template"
          onClose={() => setOpen(false)}
          busy={save.isPending}
          footer={
            <>
              <Button onClick={() => setOpen(false)} disabled={save.isPending}>
                Cancel
              </Button>
              <Button
                type="submit"
                form="save-as-template"
                variant="primary"
                loading={save.isPending}
                disabled={!name.trim()}
              >
                Save template
              </Button>
            </>
          }
        >
          <form id="save-as-template" className="stack" onSubmit={submit} noValidate>
            <ErrorSummary message={message} errors={rest} />
            <Input
              label="Template name"
              hint="The subject and the content are kept as they are now; later changes to this email do not reach the template."
              value={name}
              onChange={(e) => setName(e.target.value)}
              maxLength={200}
              required
              error={fields['/name']}
              data-autofocus
            />
          </form>
        </Dialog>,
        document.body,
      )}
    </>
  );
}
