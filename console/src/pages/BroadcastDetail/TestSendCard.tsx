/** A test send to up to 5 addresses, personalised like the preview. */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { Button, ErrorSummary, Input } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { problemOf } from '../../lib/forms';

export function TestSendCard({
  broadcast,
  contactId,
  beforeSend,
}: {
  broadcast: Broadcast;
  contactId: string;
  beforeSend: () => Promise<void>;
}) {
  const [to, setTo] = useState('');
  const emails = to
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const send = useMutation({
    mutationFn: async () => {
      await beforeSend();
      return unwrap(
        await api.POST('/v1/broadcasts/{broadcastId}/test', {
          params: { path: { broadcastId: broadcast.id } },
          body: { emails, ...(contactId ? { contactId } : {}) },
        }),
      );
    },
  });
  const { fields, message, rest } = problemOf(send.error, { '/emails': 'To', '/emails/*': 'Address' });
  const tooMany = emails.length > 5;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!tooMany && emails.length) send.mutate();
  };
  return (
    <section className="card" aria-labelledby="test-h">
      <h2 id="test-h">Send a test</h2>
      <form className="stack-sm" onSubmit={submit} noValidate>
        <Input
          label="To (up to 5 addresses)"
          value={to}
          onChange={(e) => setTo(e.target.value)}
          placeholder="you@example.com, colleague@example.com"
          error={tooMany ? 'At most 5 addresses.' : (fields['/emails'] ?? fields['/emails/*'])}
          hint="Personalised like the preview; the subject starts with [Test]. Tests count in no statistics."
        />
        <ErrorSummary message={message} errors={rest} />
        <div>
          <Button type="submit" loading={send.isPending} disabled={!emails.length || tooMany}>
            Send test
          </Button>
        </div>
        {send.data && (
          <div className="stack-sm" role="status">
            {send.data.sent.length > 0 && (
              <div className="callout callout-success">Sent to {send.data.sent.map((s) => s.email).join(', ')}.</div>
            )}
            {send.data.failed.length > 0 && (
              <div className="callout callout-danger">
                <strong>Not sent:</strong>
                <ul>
                  {send.data.failed.map((f) => (
                    <li key={f.email}>
                      {f.email}: {f.error}
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </div>
        )}
      </form>
    </section>
  );
}
