/** The pickers' queries of the automation pages (forms by group, recent contacts, the workspace's default sender). */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { contactKeys, formKeys, workspaceKeys } from '../api/keys';

/** The form groups (one entry per form, named after its newest version), for the form.submitted trigger. */
export function useFormGroups() {
  return useQuery({
    queryKey: formKeys.groups(),
    queryFn: async () => {
      const forms = unwrap(await api.GET('/v1/forms', { params: { query: { limit: 100 } } })).data;
      const groups = new Map<string, { id: string; name: string; version: number }>();
      for (const f of forms) {
        const had = groups.get(f.formGroupId);
        if (!had || f.version > had.version)
          groups.set(f.formGroupId, {
            id: f.formGroupId,
            name: f.slug ? `${f.name} (/f/${f.slug})` : f.name,
            version: f.version,
          });
      }
      return [...groups.values()].map(({ id, name }) => ({ id, name }));
    },
    staleTime: 30_000,
  });
}

/** The newest contacts, for the simulator's picker. */
export function useRecentContacts() {
  return useQuery({
    queryKey: contactKeys.recent(),
    queryFn: async () => unwrap(await api.GET('/v1/contacts', { params: { query: { limit: 50 } } })).data,
    staleTime: 30_000,
  });
}

/** The workspace's default sender (settings.defaultFrom), for new send steps. */
export function useDefaultFrom() {
  return useQuery({
    queryKey: workspaceKeys.defaultFrom(),
    queryFn: async () => unwrap(await api.GET('/v1/workspace')).settings.defaultFrom,
    staleTime: 60_000,
  });
}
