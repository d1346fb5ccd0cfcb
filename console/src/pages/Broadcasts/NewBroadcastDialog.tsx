/**
 * A new broadcast (a draft): its name, and how its email is made: the visual editor (a new block document), a template
 * (a starter of the gallery or one of the workspace's, copied into the draft) or HTML code. The server gives it the
 * workspace's default sender (settings.defaultFrom).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { Button, Dialog, ErrorSummary, Input } from '../../components';
import { TemplateGallery, type PickedTemplate } from '../../components/TemplateGallery';
import { newDocument } from '../../components/email-editor/operations';
import { useWorkspaceLook } from '../../components/email-editor/workspace';
import type { Broadcast } from '../../lib/audience';
import { useDefaultFrom } from '../../lib/automation-hooks';
import { problemOf } from '../../lib/forms';

export function NewBroadcastDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'visual' | 'code' | 'template'>('visual');
  const [picked, setPicked] = useState<PickedTemplate | null>(null);
  const [galleryOpen, setGalleryOpen] = useState(false);
  const look = useWorkspaceLook();
  const defaultFrom = useDefaultFrom();
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v1/broadcasts', {
          body: {
            name: name.trim(),
            ...(mode === 'visual'
              ? { emailContent: { editorContent: newDocument({ brandColor: look.brandColor }) } }
              : mode === 'template' && picked
                ? {
                    emailContent: {
                      subject: picked.content.subject,
                      previewText: picked.content.previewText ?? null,
                      html: picked.content.html,
                      text: picked.content.text,
                      editorContent: picked.content.editorContent ?? null,
                    },
                  }
                : {}),
          },
        }),
      ),
    onSuccess: (b: Broadcast) => {
      void qc.invalidateQueries({ queryKey: broadcastKeys.all });
      onClose();
      navigate(`/broadcasts/${b.id}`);
    },
  });
  const { fields, message, rest } = problemOf(create.error, { '/name': 'Name' });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Dialog
      open={open}
      title="New broadcast"
      onClose={onClose}
      busy={create.isPending}
      footer={
        <>
          <Button onClick={onClose} disabled={create.isPending}>
            Cancel
          </Button>
          <Button
            type="submit"
            form="new-broadcast"
            variant="primary"
            loading={create.isPending}
            disabled={!name.trim() || (mode === 'template' && !picked)}
          >
            Create draft
          </Button>
        </>
      }
    >
      <form id="new-broadcast" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={message} errors={rest} />
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={fields['/name']}
          required
          maxLength={255}
          hint="For you; recipients see the subject."
          data-autofocus
        />
        <p className="muted small" data-testid="new-broadcast-sender">
          {defaultFrom.isPending
            ? '\u00a0' /* the settings are on their way: no sentence that may prove wrong a moment later */
            : defaultFrom.data
              ? `It is sent from your default sender, ${defaultFrom.data}, unless you change it in the draft.`
              : 'Choose its sender in the draft, or set a default sender in Settings.'}
        </p>
        <fieldset className="stack-sm">
          <legend>The email</legend>
          <label className="check">
            <input
              type="radio"
              name="new-broadcast-mode"
              checked={mode === 'visual'}
              onChange={() => setMode('visual')}
            />
            <span>
              <strong>Visual editor</strong>
              <span className="hint muted small"> — blocks of text, images and buttons; no HTML needed.</span>
            </span>
          </label>
          <label className="check">
            <input
              type="radio"
              name="new-broadcast-mode"
              checked={mode === 'template'}
              onChange={() => {
                setMode('template');
                if (!picked) setGalleryOpen(true);
              }}
            />
            <span>
              <strong>From a template</strong>
              <span className="hint muted small" data-testid="new-broadcast-template">
                {picked ? ` — ${picked.name}. ` : ' — a starter email or one of your templates. '}
              </span>
            </span>
          </label>
          {mode === 'template' && (
            <div>
              <Button size="sm" onClick={() => setGalleryOpen(true)}>
                {picked ? 'Choose another template…' : 'Choose a template…'}
              </Button>
            </div>
          )}
          <label className="check">
            <input type="radio" name="new-broadcast-mode" checked={mode === 'code'} onChange={() => setMode('code')} />
            <span>
              <strong>Code</strong>
              <span className="hint muted small"> — write the HTML yourself.</span>
            </span>
          </label>
        </fieldset>
      </form>
      <TemplateGallery
        open={galleryOpen}
        title="Start from a template"
        onClose={() => setGalleryOpen(false)}
        onPick={(p) => {
          setPicked(p);
          setMode('template');
          if (!name.trim()) setName(p.name);
          setGalleryOpen(false);
        }}
      />
    </Dialog>
  );
}
