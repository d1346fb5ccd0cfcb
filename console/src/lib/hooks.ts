import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { templateKeys } from '../api/keys';

/** The templates for pickers (the first 100; a workspace rarely has more). */
export function useTemplates() {
  return useQuery({
    queryKey: templateKeys.picker(),
    queryFn: async () => unwrap(await api.GET('/v1/templates', { params: { query: { limit: 100 } } })).data,
    staleTime: 60_000,
  });
}
