/**
 * Who may do what. admin.system implies every permission in every org; admin.org implies every
 * other permission within the caller's own org. Roles are named sets of permissions.
 */
import type { components } from '../../../generated/types/dashboard.js';

export type Permission = components['schemas']['permission'];
export type Role = components['schemas']['role'];

export const PERMISSIONS: readonly Permission[] = [
  'admin.system', 'admin.org', 'admin.users', 'reports.view', 'scans.create', 'branding.view', 'compliance.view', 'issues.fix',
];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  system_admin: ['admin.system'],
  org_admin: ['admin.org'],
  member: ['reports.view', 'scans.create', 'branding.view', 'compliance.view', 'issues.fix'],
  viewer: ['reports.view', 'branding.view', 'compliance.view'],
  service: ['reports.view', 'scans.create', 'compliance.view'],
};

export const isPermission = (p: string): p is Permission => (PERMISSIONS as readonly string[]).includes(p);
export const isRole = (r: string): r is Role => Object.hasOwn(ROLE_PERMISSIONS, r);

/** Whether a holder of `held` may exercise `needed` (within its own org; cross-org needs admin.system). */
export function grants(held: ReadonlySet<Permission>, needed: Permission): boolean {
  if (held.has('admin.system') || held.has(needed)) return true;
  return needed !== 'admin.system' && held.has('admin.org');
}
