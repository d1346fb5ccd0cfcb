/** A contact's tags as chips: each removed with its ×, a new one added by name (PUT replaces the list whole). */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { Button } from '../../components';
import { useTags, type Contact } from '../../lib/audience';
import { describeProblem } from '../../lib/problems';

/** What the API allows (docs/contacts.md "Tags"). */
const MAX_TAGS = 100;
const MAX_TAG_LENGTH = 64;

export function TagsCard({ contact, editable }: { contact: Contact; editable: boolean }) {
  const qc = useQueryClient();
  const known = useTags();
  const [draft, setDraft] = useState('');
  const listId = useId();
  const save = useMutation({
    mutationFn: async (tags: string[]) =>
      unwrap(
        await api.PUT('/v1/contacts/{contactId}', { params: { path: { contactId: contact.id } }, body: { tags } }),
      ),
    onSuccess: (c) => {
      qc.setQueryData(contactKeys.detail(contact.id), c);
      void qc.invalidateQueries({ queryKey: contactKeys.tags() });
      void qc.invalidateQueries({ queryKey: contactKeys.lists() });
      void qc.invalidateQueries({ queryKey: contactKeys.activity(contact.id) });
    },
  });
  const problem = save.error ? describeProblem(save.error, { '/tags': 'Tags', '/tags/*': 'Tag' }) : null;
  const tag = draft.trim();
  const has = contact.tags.some((t) => t.toLowerCase() === tag.toLowerCase());
  const add = (e: FormEvent) => {
    e.preventDefault();
    if (!tag || has) return setDraft('');
    save.mutate([...contact.tags, tag], { onSuccess: () => setDraft('') });
  };
  return (
    <section className="card" aria-labelledby="tags-h">
      <h2 id="tags-h">Tags</h2>
      {contact.tags.length === 0 ? (
        <p className="muted">No tags yet.</p>
      ) : (
        <ul className="list-plain tag-chips" aria-label="Tags">
          {contact.tags.map((t) => (
            <li key={t} className="tag-chip">
              <span className="break">{t}</span>
              {editable && (
                <button
                  type="button"
                  className="tag-chip-remove"
                  aria-label={`Remove the tag ${t}`}
                  disabled={save.isPending}
                  onClick={() => save.mutate(contact.tags.filter((x) => x !== t))}
                >
                  ×
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {editable && contact.tags.length < MAX_TAGS && (
        <form className="row tag-add" onSubmit={add}>
          <input
            className="input"
            aria-label="New tag"
            placeholder="Add a tag"
            value={draft}
            maxLength={MAX_TAG_LENGTH}
            list={listId}
            onChange={(e) => setDraft(e.target.value)}
            disabled={save.isPending}
          />
          <datalist id={listId}>
            {(known.data ?? [])
              .filter((k) => !contact.tags.some((t) => t.toLowerCase() === k.tag.toLowerCase()))
              .slice(0, 50)
              .map((k) => (
                <option key={k.tag} value={k.tag} />
              ))}
          </datalist>
          <Button type="submit" size="sm" disabled={!tag || has || save.isPending}>
            Add
          </Button>
        </form>
      )}
      {problem && (problem.message || Object.keys(problem.fields).length > 0) && (
        <p className="error small" role="alert">
          {[problem.message, ...Object.values(problem.fields)].filter(Boolean).join(' ')}
        </p>
      )}
      <p className="muted small">
        A tag is one whatever its case. Segments and the contact list can filter on tags; up to {MAX_TAGS} a contact.
      </p>
    </section>
  );
}
