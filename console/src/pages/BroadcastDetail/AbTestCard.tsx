/**
 * The A/B section of the composer (docs/ab-tests.md): a toggle, 2–4 variants (subject, preview text, sender; the body
 * the broadcast's or its own HTML; a variant's own block document, written through the API, is kept as it is), the test
 * share, the metric and the wait. Saved by its own button (a PUT of `abTest` alone).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { Button, Checkbox, ErrorSummary, Input, Select, Textarea, useToast } from '../../components';
import type { Broadcast, BroadcastUpdate } from '../../lib/audience';
import { problemOf } from '../../lib/forms';

type AbTest = NonNullable<Broadcast['abTest']>;
type AbVariant = AbTest['variants'][number];

interface VariantDraft {
  id: string;
  subject: string;
  previewText: string;
  from: string;
  /** 'same': the broadcast's body; 'html': its own HTML; 'kept': its own body written elsewhere (a block document). */
  body: 'same' | 'html' | 'kept';
  html: string;
  kept: AbVariant['emailContent'];
}

interface Draft {
  on: boolean;
  variants: VariantDraft[];
  testPercent: number;
  winnerBy: AbTest['winnerBy'];
  waitMinutes: number;
}

const IDS = ['a', 'b', 'c', 'd'];

export const WAITS: { value: number; label: string }[] = [
  { value: 30, label: '30 minutes' },
  { value: 60, label: '1 hour' },
  { value: 120, label: '2 hours' },
  { value: 240, label: '4 hours' },
  { value: 480, label: '8 hours' },
  { value: 1440, label: '1 day' },
  { value: 4320, label: '3 days' },
  { value: 10080, label: '7 days' },
];

function variantDraft(v: AbVariant): VariantDraft {
  const c = v.emailContent;
  const blocks = c?.editorContent != null;
  return {
    id: v.id,
    subject: v.subject,
    previewText: v.previewText ?? '',
    from: v.from ?? '',
    body: !c ? 'same' : blocks ? 'kept' : 'html',
    html: c?.html ?? '',
    kept: c,
  };
}

function blankVariant(id: string, subject = ''): VariantDraft {
  return { id, subject, previewText: '', from: '', body: 'same', html: '', kept: null };
}

function draftOf(b: Broadcast): Draft {
  const t = b.abTest;
  if (!t)
    return {
      on: false,
      variants: [blankVariant('a', b.emailContent.subject ?? ''), blankVariant('b')],
      testPercent: 20,
      winnerBy: 'OPENS',
      waitMinutes: 240,
    };
  return {
    on: true,
    variants: t.variants.map(variantDraft),
    testPercent: t.testPercent,
    winnerBy: t.winnerBy,
    waitMinutes: t.waitMinutes,
  };
}

function bodyOf(d: Draft): BroadcastUpdate['abTest'] {
  if (!d.on) return null;
  return {
    testPercent: d.testPercent,
    winnerBy: d.winnerBy,
    waitMinutes: d.waitMinutes,
    variants: d.variants.map((v) => ({
      id: v.id,
      subject: v.subject,
      previewText: v.previewText.trim() ? v.previewText : null,
      from: v.from.trim() ? v.from.trim() : null,
      emailContent:
        v.body === 'same'
          ? null
          : v.body === 'kept'
            ? v.kept
            : { subject: null, previewText: null, html: v.html || null, text: null, editorContent: null },
    })),
  };
}

const LABELS = {
  '/abTest/variants': 'Variants',
  '/abTest/variants/*/subject': { label: 'Subject of variant', numbered: true },
  '/abTest/variants/*/from': { label: 'From of variant', numbered: true },
  '/abTest/variants/*/previewText': { label: 'Preview text of variant', numbered: true },
  '/abTest/variants/*/emailContent/**': { label: 'Content of variant', numbered: true },
  '/abTest/testPercent': 'Test share',
  '/abTest/waitMinutes': 'Wait',
};

export function AbTestCard({ broadcast, editable }: { broadcast: Broadcast; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [saved, setSaved] = useState<Draft>(() => draftOf(broadcast));
  const [d, setD] = useState<Draft>(saved);
  const dirty = JSON.stringify(d) !== JSON.stringify(saved);
  const setVariant = (i: number, patch: Partial<VariantDraft>) =>
    setD((x) => ({ ...x, variants: x.variants.map((v, k) => (k === i ? { ...v, ...patch } : v)) }));

  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT('/v1/broadcasts/{broadcastId}', {
          params: { path: { broadcastId: broadcast.id } },
          body: { abTest: bodyOf(d) },
        }),
      ),
    onSuccess: (b) => {
      qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
      const next = draftOf(b);
      setSaved(next);
      setD(next);
      toast.success(b.abTest ? 'A/B test saved.' : 'A/B test removed.');
    },
  });
  const { fields, message, rest } = problemOf(save.error, LABELS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const field = (i: number, key: string) => fields[`/abTest/variants/${i}/${key}`];

  return (
    <form className="card stack" aria-labelledby="ab-h" onSubmit={submit} noValidate>
      <h2 id="ab-h">A/B test</h2>
      <Checkbox
        label="Test variants of this email first"
        hint="A share of the audience gets one variant each; after the wait, the variant people opened or clicked most goes to everyone else."
        checked={d.on}
        onChange={(e) => setD((x) => ({ ...x, on: e.target.checked }))}
        disabled={!editable}
      />
      <ErrorSummary message={message} errors={rest} />
      {d.on && (
        <>
          <div className="ab-variants">
            {d.variants.map((v, i) => (
              <fieldset key={v.id} className="ab-variant stack-sm">
                <legend>Variant {v.id.toUpperCase()}</legend>
                <Input
                  label="Subject"
                  value={v.subject}
                  onChange={(e) => setVariant(i, { subject: e.target.value })}
                  error={field(i, 'subject')}
                  required
                  maxLength={998}
                  disabled={!editable}
                />
                <Input
                  label="Preview text"
                  value={v.previewText}
                  onChange={(e) => setVariant(i, { previewText: e.target.value })}
                  error={field(i, 'previewText')}
                  hint="Empty: the broadcast's."
                  maxLength={500}
                  disabled={!editable}
                />
                <Input
                  label="From"
                  value={v.from}
                  onChange={(e) => setVariant(i, { from: e.target.value })}
                  error={field(i, 'from')}
                  hint="Empty: the broadcast's sender."
                  placeholder={broadcast.from ?? 'Acme <news@example.com>'}
                  disabled={!editable}
                />
                <Select
                  label="Content"
                  value={v.body}
                  onChange={(e) => setVariant(i, { body: e.target.value as VariantDraft['body'] })}
                  disabled={!editable}
                  options={[
                    { value: 'same', label: 'Same as the broadcast' },
                    { value: 'html', label: 'Its own HTML' },
                    ...(v.kept?.editorContent != null ? [{ value: 'kept', label: 'Its own blocks (kept)' }] : []),
                  ]}
                />
                {v.body === 'html' && (
                  <Textarea
                    label={`HTML of variant ${v.id.toUpperCase()}`}
                    value={v.html}
                    onChange={(e) => setVariant(i, { html: e.target.value })}
                    error={fields[`/abTest/variants/${i}/emailContent/**`]}
                    rows={6}
                    className="mono"
                    disabled={!editable}
                  />
                )}
                {editable && d.variants.length > 2 && (
                  <Button
                    type="button"
                    variant="ghost"
                    onClick={() =>
                      setD((x) => ({
                        ...x,
                        variants: x.variants.filter((_, k) => k !== i).map((w, k) => ({ ...w, id: IDS[k]! })),
                      }))
                    }
                  >
                    Remove variant {v.id.toUpperCase()}
                  </Button>
                )}
              </fieldset>
            ))}
          </div>
          {editable && d.variants.length < 4 && (
            <div>
              <Button
                type="button"
                variant="secondary"
                onClick={() =>
                  setD((x) => ({ ...x, variants: [...x.variants, blankVariant(IDS[x.variants.length]!)] }))
                }
              >
                Add variant {IDS[d.variants.length]!.toUpperCase()}
              </Button>
            </div>
          )}
          <div className="grid-3">
            <Input
              label="Test share (%)"
              type="number"
              min={10}
              max={50}
              value={String(d.testPercent)}
              onChange={(e) => setD((x) => ({ ...x, testPercent: Number(e.target.value) }))}
              error={fields['/abTest/testPercent']}
              hint={`${d.testPercent}% of the audience, about ${Math.floor(d.testPercent / d.variants.length)}% per variant.`}
              disabled={!editable}
            />
            <Select
              label="Winner by"
              value={d.winnerBy}
              onChange={(e) => setD((x) => ({ ...x, winnerBy: e.target.value as Draft['winnerBy'] }))}
              disabled={!editable}
              options={[
                { value: 'OPENS', label: 'Open rate' },
                { value: 'CLICKS', label: 'Click rate' },
              ]}
              hint="People only: privacy proxies and scanners do not count."
            />
            <Select
              label="Wait before choosing"
              value={String(d.waitMinutes)}
              onChange={(e) => setD((x) => ({ ...x, waitMinutes: Number(e.target.value) }))}
              error={fields['/abTest/waitMinutes']}
              disabled={!editable}
              options={WAITS.map((w) => ({ value: String(w.value), label: w.label }))}
            />
          </div>
        </>
      )}
      {editable && (
        <div className="save-bar">
          <span className="muted small" aria-live="polite">
            {dirty ? 'Unsaved changes to the A/B test' : d.on ? 'A/B test saved.' : 'No A/B test.'}
          </span>
          <Button type="submit" variant="primary" loading={save.isPending} disabled={!dirty && !save.isError}>
            Save A/B test
          </Button>
        </div>
      )}
    </form>
  );
}
