/**
 * "Send a test" of a saved template: a transactional email (POST /v1/emails with its `templateId`, docs/emails.md) to
 * the addresses typed (the signed-in person's prefilled), from the workspace's default sender unless another From is
 * typed, with optional `data` for its Liquid. The answer links to the email's page, where its statuses show.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { emailKeys } from '../../api/keys';
import { useSession } from '../../api/session';
import { Button, Dialog, ErrorSummary, Input, Textarea, useToast } from '../../components';
import { useDefaultFrom } from '../../lib/automation-hooks';
import { problemOf } from '../../lib/forms';
import type { Template } from '../../lib/templates';

export function SendTestDialog({ template, onClose }: { template: Template | null; onClose: () => void }) {
  return template ? <SendTestForm key={template.id} template={template} onClose={onClose} /> : null;
}

function SendTestForm({ template, onClose }: { template: Template; onClose: () => void }) {
  const session = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const defaultFrom = useDefaultFrom();
  const [to, setTo] = useState(session.user.email);
  const [from, setFrom] = useState<string | null>(null);
  const [data, setData] = useState('');
  const fromValue = from ?? defaultFrom.data ?? '';
  const emails = to
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  let parsed: Record<string, unknown> | undefined;
  let dataError: string | null = null;
  if (data.trim()) {
    try {
      const v: unknown = JSON.parse(data);
      if (v && typeof v === 'object' && !Array.isArray(v)) parsed = v as Record<string, unknown>;
      else dataError = 'Write an object, like {"name": "Jane"}.';
    } catch {
      dataError = 'This is not JSON: write an object, like {"name": "Jane"}.';
    }
  }
  const send = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/emails', {
          body: { from: fromValue.trim(), to: emails, templateId: template.id, ...(parsed ? { data: parsed } : {}) },
        }),
      ),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: emailKeys.all });
      toast.success(`Test of ${template.name} sent to ${emails.join(', ')}.`);
    },
  });
  const { fields, message, rest } = problemOf(send.error, {
    '/from': 'From',
    '/to': 'To',
    '/to/*': 'Address',
    '/data': 'Data',
    '/subject': 'Subject',
  });
  const tooMany = emails.length > 50;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (emails.length && !tooMany && !dataError && fromValue.trim()) send.mutate();
  };
  return (
    <Dialog
      open
      title={`Send a test of ${template.name}`}
      onClose={onClose}
      busy={send.isPending}
      footer={
        send.data ? (
          <Button variant="primary" onClick={onClose}>
            Done
          </Button>
        ) : (
          <>
            <Button onClick={onClose} disabled={send.isPending}>
              Cancel
            </Button>
            <Button
              variant="primary"
              type="submit"
              form="send-test"
              loading={send.isPending}
              disabled={!emails.length || tooMany || Boolean(dataError) || !fromValue.trim()}
            >
              Send test
            </Button>
          </>
        )
      }
    >
      {send.data ? (
        <div className="stack-sm" role="status">
          <div className="callout callout-success">
            Sent to {emails.join(', ')} as a transactional email.{' '}
            <Link to={`/emails/${send.data.id}`} onClick={onClose}>
              Open the email
            </Link>{' '}
            to follow its delivery.
          </div>
        </div>
      ) : (
        <form id="send-test" className="stack" onSubmit={submit} noValidate>
          <ErrorSummary message={message} errors={rest} />
          <Input
            label="To"
            value={to}
            onChange={(e) => setTo(e.target.value)}
            placeholder="you@example.com, colleague@example.com"
            hint="Up to 50 addresses, separated by commas. An address suppressed after a bounce or a complaint gets nothing."
            error={tooMany ? 'At most 50 addresses.' : (fields['/to'] ?? fields['/to/*'])}
            data-autofocus
          />
          <Input
            label="From"
            value={fromValue}
            onChange={(e) => setFrom(e.target.value)}
            placeholder="hello@your-domain.com"
            hint="An address on a verified domain; the workspace's default sender to begin with."
            error={fields['/from']}
          />
          <Textarea
            label="Data (optional)"
            value={data}
            onChange={(e) => setData(e.target.value)}
            rows={3}
            placeholder='{"name": "Jane", "orderId": "1042"}'
            hint="What the template's Liquid reads, as JSON: {{ name }}."
            error={dataError ?? fields['/data']}
          />
        </form>
      )}
    </Dialog>
  );
}
