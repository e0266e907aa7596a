import type { FilterReason, TenantPolicy, Tool } from '../../../policy-schemas/types.gen.ts';
import { globMatcher } from '../../../runtime/glob.ts';
import { href } from './router.ts';

/** Where a fix is made: a page (href) or a role of the policy on screen. */
export type Fix = { label: string; href?: string; role?: string };
export type Explanation = { text: string; fix?: Fix };

export type ExplainContext = {
  tenant: string;
  toolId: string;
  tool?: Tool;
  policy?: TenantPolicy;
  subject?: string;
  /** The expanded groups the request asked for, as the simulator answered them. */
  groups?: string[];
  state?: string;
  profile?: string;
};

const toolPage = (id: string, label: string): Fix => ({ label, href: href(`/tools/${encodeURIComponent(id)}`) });

/** Why a tool is filtered out, in words, with where to fix it. */
export function explainFiltered(reason: FilterReason | 'group_not_permitted' | 'no_subject', ctx: ExplainContext): Explanation {
  const roles = (ctx.subject && ctx.policy?.bindings?.[ctx.subject]) || [];
  const policyFix = (role?: string): Fix =>
    role ? { label: `Edit role ${role}`, role, href: href(`/tenants/${ctx.tenant}`) } : { label: 'Edit the policy', href: href(`/tenants/${ctx.tenant}`) };
  switch (reason) {
    case 'quarantined':
      return { text: 'Imported and waiting for an admin to review and approve it.', fix: { label: 'Review it', href: href('/mcp') } };
    case 'disabled':
      return { text: 'Disabled in the inventory.', fix: toolPage(ctx.toolId, 'Open the tool') };
    case 'no_redaction':
      return { text: 'Has no redaction allowlist, so it never enters a bundle.', fix: toolPage(ctx.toolId, 'Set its redaction') };
    case 'group': {
      const groups = ctx.tool?.groups ?? [];
      return {
        text: `Belongs to ${groups.length ? groups.join(', ') : 'no group'}, which the request does not ask for${ctx.groups?.length ? ` (it asks for ${ctx.groups.join(', ')})` : ''}.`,
        fix: toolPage(ctx.toolId, 'Change its groups'),
      };
    }
    case 'state':
      return {
        text: `Not available in state ${ctx.state || 'undefined'}${ctx.tool?.availableInStates ? ` (only in ${ctx.tool.availableInStates.join(', ')})` : ''}.`,
        fix: toolPage(ctx.toolId, 'Change its states'),
      };
    case 'denied': {
      for (const role of roles) {
        const glob = ctx.policy?.roles?.[role]?.deny?.find((g) => globMatcher(g)(ctx.toolId));
        if (glob) return { text: `Matches deny pattern ${glob} of role ${role}; deny wins over allow.`, fix: policyFix(role) };
      }
      return { text: 'Matches a deny pattern of one of the subject’s roles; deny wins over allow.', fix: policyFix(roles[0]) };
    }
    case 'not_allowed':
      return {
        text: `No allow pattern of ${roles.length ? `role ${roles.join(', ')}` : 'the subject’s roles'} matches it.`,
        fix: policyFix(roles[0]),
      };
    case 'runtime_gate': {
      const gates = (ctx.tool?.requires ?? []).map((g) => `${g.fact} in ${g.in.map(String).join(', ')}`);
      return {
        text: `A runtime gate does not hold on the request’s facts${gates.length ? ` (needs ${gates.join('; ')})` : ''}.`,
        fix: toolPage(ctx.toolId, 'Open its gates'),
      };
    }
    case 'profile':
      return {
        text: ctx.profile
          ? `Hidden under profile ${ctx.profile} (disabled there, or enabled only in another profile).`
          : 'Enabled only under a provider profile, and the request names none.',
        fix: policyFix(),
      };
    case 'no_connection':
      return {
        text: 'Needs a connection, and no unexpired grant gives this subject one for it.',
        fix: { label: 'Add a grant', href: href(`/tenants/${ctx.tenant}/grants`) },
      };
    case 'no_role':
      return {
        text: `${ctx.subject ? `Subject ${ctx.subject}` : 'The subject'} is bound to no role.`,
        fix: { label: 'Add a binding', href: href(`/tenants/${ctx.tenant}`) },
      };
    case 'group_not_permitted':
      return { text: 'The request asks for a group none of the subject’s roles permits.', fix: policyFix(roles[0]) };
    case 'no_subject':
      return { text: 'No subject is bound to this role, so nothing can use it.', fix: { label: 'Add a binding', href: href(`/tenants/${ctx.tenant}`) } };
    default:
      return { text: String(reason) };
  }
}
