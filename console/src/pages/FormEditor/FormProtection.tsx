/**
 * A form's protection against bot sign-ups (docs/bot-protection.md): the proof-of-work switch in the editor, and
 * the review of submissions HELD as part of a burst (release signs the person up and mails the confirmation;
 * discard drops it).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { formKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import { Button, Checkbox, StatusBadge, useToast } from '../../components';
import { describeError } from '../../lib/problems';

type Submission =
  paths['/v1/forms/{formId}/submissions']['get']['responses'][200]['content']['application/json']['data'][number];
export type SubmissionFilter = '' | 'HELD';

export function ProtectionFieldset({
  enabled,
  onChange,
  disabled,
}: {
  enabled: boolean;
  onChange: (v: boolean) => void;
  disabled: boolean;
}) {
  return (
    <fieldset disabled={disabled} className="card stack">
      <legend>Bot protection</legend>
      <Checkbox
        label="Ask browsers for a proof of work before they may submit"
        hint="A small computation the visitor’s browser does while they fill in the form: people do not notice it, scripts that post sign-ups in bulk are refused. No third-party service is involved. Bursts of sign-ups (one network, one address pattern) are held for review either way."
        checked={enabled}
        onChange={(e) => onChange(e.target.checked)}
      />
    </fieldset>
  );
}

const HELD_REASONS: Record<string, string> = {
  ip_range: 'many from one network',
  pattern: 'many addresses of one pattern',
  mailbox: 'variants of one mailbox',
  domain: 'many from one domain',
};

/** The submission's review status; a HELD one says why. */
export function SubmissionStatus({ s }: { s: Submission }) {
  const tone = s.status === 'HELD' ? 'warning' : s.status === 'DISCARDED' ? 'neutral' : 'success';
  return (
    <div>
      <StatusBadge status={s.status} tone={tone} />
      {s.status === 'HELD' && s.heldReasons?.length ? (
        <div className="muted small">{s.heldReasons.map((r) => HELD_REASONS[r] ?? r).join('; ')}</div>
      ) : null}
    </div>
  );
}

/** Release or discard a HELD submission. */
export function ReviewActions({ formId, s }: { formId: string; s: Submission }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const [done, setDone] = useState<string | null>(null);
  const review = useMutation({
    mutationFn: async (action: 'release' | 'discard') => {
      const path =
        action === 'release'
          ? '/v1/forms/{formId}/submissions/{submissionId}/release'
          : '/v1/forms/{formId}/submissions/{submissionId}/discard';
      unwrap(await api.POST(path, { params: { path: { formId, submissionId: s.id } } }));
      return action;
    },
    onSuccess: (action) => {
      setDone(action);
      toast.success(action === 'release' ? 'Released: the person is signed up.' : 'Discarded.');
      void qc.invalidateQueries({ queryKey: formKeys.submissions() });
    },
    onError: (err) => toast.error(describeError(err)),
  });
  if (s.status !== 'HELD' || done || !can('write:forms')) return null;
  return (
    <span className="row nowrap">
      <Button
        size="sm"
        variant="primary"
        loading={review.isPending && review.variables === 'release'}
        onClick={() => review.mutate('release')}
        aria-label={`Release the submission of ${formatWhen(s.createdAt)}`}
      >
        Release
      </Button>
      <Button
        size="sm"
        loading={review.isPending && review.variables === 'discard'}
        onClick={() => review.mutate('discard')}
        aria-label={`Discard the submission of ${formatWhen(s.createdAt)}`}
      >
        Discard
      </Button>
    </span>
  );
}

function formatWhen(iso: string): string {
  return new Date(iso).toLocaleString();
}
