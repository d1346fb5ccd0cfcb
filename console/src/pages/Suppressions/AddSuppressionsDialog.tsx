/**
 * Adds addresses to the suppression list: one, or a pasted list (one per line, or separated by commas or
 * semicolons), with an optional note. POST /v1/suppressions/bulk adds them in one go; the summary says how many
 * were added, how many were on the list already (their entries are kept as they were) and which are not addresses.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { contactKeys, suppressionKeys } from '../../api/keys';
import type { paths } from '../../api/generated/schema';
import { Button, Dialog, ErrorSummary, Input, Textarea, useToast } from '../../components';
import { formatNumber } from '../../lib/format';
import { problemOf } from '../../lib/forms';

type Outcome = paths['/v1/suppressions/bulk']['post']['responses'][200]['content']['application/json'];

/** What the API takes at once. */
const LIMIT = 1000;

/** The addresses of a pasted text: split at line breaks, commas and semicolons, blanks dropped. */
export function splitAddresses(text: string): string[] {
  return text
    .split(/[\n\r,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

const count = (n: number, one: string, many: string) => `${formatNumber(n)} ${n === 1 ? one : many}`;

export function AddSuppressionsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [text, setText] = useState('');
  const [note, setNote] = useState('');
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const emails = splitAddresses(text);
  const tooMany = emails.length > LIMIT;
  const add = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/suppressions/bulk', {
          body: { emails, reason: 'MANUAL', ...(note.trim() ? { detail: note.trim() } : {}) },
        }),
      ),
    onSuccess: (result) => {
      void qc.invalidateQueries({ queryKey: suppressionKeys.all });
      if (result.added.length) void qc.invalidateQueries({ queryKey: contactKeys.all });
      if (result.added.length) toast.success(`${count(result.added.length, 'address', 'addresses')} added.`);
      setOutcome(result);
    },
  });
  const close = () => {
    setText('');
    setNote('');
    setOutcome(null);
    add.reset();
    onClose();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (emails.length && !tooMany) add.mutate();
  };
  const { message } = problemOf(add.error);

  if (outcome) {
    return (
      <Dialog
        open={open}
        title="Added to the suppression list"
        onClose={close}
        footer={
          <>
            {outcome.invalid.length > 0 && (
              <Button
                onClick={() => {
                  // Back to the form with only what was refused, to correct it.
                  setText(outcome.invalid.map((i) => i.email).join('\n'));
                  setOutcome(null);
                  add.reset();
                }}
              >
                Correct the invalid ones
              </Button>
            )}
            <Button variant="primary" onClick={close} data-autofocus>
              Done
            </Button>
          </>
        }
      >
        <div className="stack-sm" role="status">
          <ul className="bulk-summary">
            <li>
              <strong>{count(outcome.added.length, 'address', 'addresses')} added</strong>
              {outcome.added.length > 0 && ': they get no broadcast or automation email from now on.'}
            </li>
            <li>
              <strong>{count(outcome.alreadySuppressed.length, 'was', 'were')} on the list already</strong>
              {outcome.alreadySuppressed.length > 0 && ': kept as they were, with their first reason.'}
            </li>
            <li>
              <strong>{count(outcome.invalid.length, 'is not an email address', 'are not email addresses')}</strong>
              {outcome.invalid.length > 0 && ': nothing was added for these.'}
            </li>
          </ul>
          {outcome.invalid.length > 0 && (
            <div className="scroll-box small">
              <ul className="invalid-list">
                {outcome.invalid.map((i) => (
                  <li key={i.index} className="break">
                    {i.email.trim() ? `“${i.email}”` : '(an empty entry)'}
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog
      open={open}
      title="Add addresses to the suppression list"
      onClose={close}
      busy={add.isPending}
      footer={
        <>
          <Button onClick={close} disabled={add.isPending}>
            Cancel
          </Button>
          <Button
            type="submit"
            form="add-suppressions"
            variant="primary"
            loading={add.isPending}
            disabled={emails.length === 0 || tooMany}
          >
            {emails.length > 1 ? `Add ${formatNumber(emails.length)} addresses` : 'Add address'}
          </Button>
        </>
      }
    >
      <form id="add-suppressions" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={add.isError ? message : null} />
        <Textarea
          label="Addresses"
          value={text}
          onChange={(e) => setText(e.target.value)}
          rows={6}
          spellCheck={false}
          autoComplete="off"
          placeholder={'ana@example.com\nbo@example.org, cy@example.net'}
          hint={`One address, or a list: one per line, or separated by commas. Up to ${formatNumber(LIMIT)} at a time.`}
          error={
            tooMany
              ? `That is ${formatNumber(emails.length)} addresses: add at most ${formatNumber(LIMIT)} at a time.`
              : null
          }
          data-autofocus
        />
        <Input
          label="Note (optional)"
          value={note}
          onChange={(e) => setNote(e.target.value)}
          maxLength={1000}
          hint="Why they are suppressed, e.g. “asked by phone”. Shown with each entry."
        />
        <p className="muted small">
          Suppressed addresses get no broadcast or automation email, whatever their contact says. No contact is created,
          and contacts keep their status.
        </p>
      </form>
    </Dialog>
  );
}
