import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { State } from '../../../../../policy-schemas/types.gen.ts';
import { api } from '../../../lib/api-client.ts';

export async function saveState({ state, create }: { state: State; create: boolean }): Promise<State> {
  if (create) return api<State>('/v1/states', { method: 'POST', body: state });
  return api<State>(`/v1/states/${encodeURIComponent(state.name)}`, { method: 'PUT', body: state, ifMatch: state.version });
}

export async function deleteState(state: State): Promise<void> {
  await api<void>(`/v1/states/${encodeURIComponent(state.name)}`, { method: 'DELETE', ifMatch: state.version });
}

export function useSaveState() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: saveState, onSuccess: () => qc.invalidateQueries({ queryKey: ['states'] }) });
}

export function useDeleteState() {
  const qc = useQueryClient();
  return useMutation({ mutationFn: deleteState, onSuccess: () => qc.invalidateQueries({ queryKey: ['states'] }) });
}
