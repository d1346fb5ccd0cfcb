/** A new automation (a draft): its name and trigger. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { automationKeys } from '../../api/keys';
import { TriggerFields } from '../../components/AutomationEditors';
import { Button, Dialog, ErrorSummary, Input } from '../../components';
import {
  automationsApi,
  checkTrigger,
  toDraftTrigger,
  toTrigger,
  type Automation,
  type DraftTrigger,
} from '../../lib/automations';
import { useFormGroups } from '../../lib/automation-hooks';
import { useSegments, useTopics } from '../../lib/audience';
import { problemOf } from '../../lib/forms';

export function NewAutomationDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const forms = useFormGroups();
  const topics = useTopics();
  const segments = useSegments();
  const [name, setName] = useState('');
  const [trigger, setTrigger] = useState<DraftTrigger>(() => ({ ...toDraftTrigger(null), type: 'form.submitted' }));
  const [tried, setTried] = useState(false);
  const local = checkTrigger(trigger);
  const create = useMutation({
    mutationFn: () => automationsApi.create({ name: name.trim(), trigger: toTrigger(trigger), steps: [] }),
    onSuccess: (a: Automation) => {
      void qc.invalidateQueries({ queryKey: automationKeys.all });
      onClose();
      navigate(`/automations/${a.id}`);
    },
  });
  const { fields, message, rest } = problemOf(create.error, {
    '/name': 'Name',
    '/trigger/**': 'Trigger',
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (Object.keys(local).length === 0) create.mutate();
  };
  const errors = { ...(tried ? local : {}), ...fields };
  return (
    <Dialog
      open={open}
      title="New automation"
      onClose={onClose}
      busy={create.isPending}
      footer={
        <>
          <Button onClick={onClose} disabled={create.isPending}>
            Cancel
          </Button>
          <Button
            type="submit"
            form="new-automation"
            variant="primary"
            loading={create.isPending}
            disabled={!name.trim()}
          >
            Create draft
          </Button>
        </>
      }
    >
      <form id="new-automation" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={message} errors={rest} />
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={fields['/name']}
          required
          maxLength={255}
          hint="For you; contacts never see it."
          placeholder="Welcome series"
          data-autofocus
        />
        <TriggerFields
          trigger={{ ...trigger, useFilter: false }}
          onChange={(t) => setTrigger({ ...t, useFilter: false })}
          errors={errors}
          disabled={false}
          forms={forms}
          topics={topics}
          segments={segments}
          idPrefix="new-trigger"
          hideFilter
        />
        <p className="muted small">Then add the steps: emails, waits, branches. Nothing runs until you activate it.</p>
      </form>
    </Dialog>
  );
}
