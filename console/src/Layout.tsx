/**
 * The app shell: a skip link, the sidebar (a drawer below 760 px), the top bar with the user menu, and the
 * page in <main>. Focus moves to the page's heading after each navigation, for screen-reader and keyboard users.
 */
import { Suspense, useEffect, useRef, useState } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router';
import { useCan, useSession } from './api/session';
import type { Action } from './lib/roles';
import { Icon } from './components/Icon';
import { Skeleton } from './components/States';
import { TwoFactorGate } from './pages/Profile/TwoFactorGate';

interface NavItem {
  to: string;
  label: string;
  icon: string;
  end?: boolean;
  /** Shown only to the roles that may do this (lib/roles.ts): a page the role cannot use is not offered. */
  needs?: Action;
}

const NAV: { section: string; items: NavItem[] }[] = [
  {
    section: 'Audience',
    items: [
      { to: '/', label: 'Dashboard', icon: 'dashboard', end: true },
      { to: '/forms', label: 'Forms', icon: 'forms' },
      { to: '/contacts', label: 'Contacts', icon: 'contacts' },
      { to: '/segments', label: 'Segments', icon: 'segments' },
      { to: '/topics', label: 'Topics', icon: 'topics' },
      { to: '/suppressions', label: 'Suppressions', icon: 'suppressions' },
    ],
  },
  {
    section: 'Email',
    items: [
      { to: '/broadcasts', label: 'Broadcasts', icon: 'broadcasts' },
      { to: '/automations', label: 'Automations', icon: 'automations' },
      { to: '/emails', label: 'Emails', icon: 'emails', needs: 'send:emails' },
      { to: '/templates', label: 'Templates', icon: 'templates' },
      { to: '/images', label: 'Images', icon: 'images' },
      { to: '/domains', label: 'Domains', icon: 'domains' },
      { to: '/inbound', label: 'Reports to review', icon: 'mail' },
    ],
  },
  {
    section: 'Workspace',
    items: [
      { to: '/webhooks', label: 'Webhooks', icon: 'webhooks' },
      { to: '/api-keys', label: 'API keys', icon: 'keys', needs: 'manage:keys' },
      { to: '/people', label: 'People', icon: 'people', needs: 'manage:people' },
      { to: '/audit-log', label: 'Audit log', icon: 'clock', needs: 'read:audit' },
      { to: '/settings', label: 'Settings', icon: 'settings' },
    ],
  },
];

function UserMenu() {
  const session = useSession();
  const can = useCan();
  const [open, setOpen] = useState(false);
  const wrap = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDoc = (e: MouseEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener('mousedown', onDoc);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDoc);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  const name = session.user.name || session.user.email;
  return (
    <div className="user-menu" ref={wrap}>
      <button
        ref={button}
        type="button"
        className="btn btn-ghost"
        aria-expanded={open}
        aria-haspopup="true"
        aria-controls="user-menu-panel"
        onClick={() => setOpen((o) => !o)}
      >
        <span className="avatar" aria-hidden="true">
          {name.slice(0, 1).toUpperCase()}
        </span>
        <span className="visually-hidden">Account menu for </span>
        <span className="user-name">{name}</span>
      </button>
      {open && (
        <div className="user-menu-panel" id="user-menu-panel">
          <div className="who">
            <div className="cell-main">{session.user.name || 'Signed in'}</div>
            <div className="muted small">{session.user.email}</div>
            <div className="muted small">
              Role: {session.user.role} · {session.workspace.name}
            </div>
          </div>
          <NavLink className="menu-item" to="/profile" onClick={() => setOpen(false)}>
            Your profile
          </NavLink>
          <NavLink className="menu-item" to="/people" onClick={() => setOpen(false)}>
            {can('manage:people') ? 'Sessions and people' : 'Your sessions'}
          </NavLink>
          <form method="post" action="/app/logout">
            <input type="hidden" name="_csrf" value={session.csrfToken} />
            <button type="submit" className="menu-item">
              Sign out
            </button>
          </form>
        </div>
      )}
    </div>
  );
}

export function Layout() {
  const session = useSession();
  // A workspace that requires two-factor sign-in: without it, the set-up and nothing else.
  if (session.twoFactor?.required && !session.twoFactor.enabled) return <TwoFactorGate />;
  return <Shell />;
}

function Shell() {
  const session = useSession();
  const can = useCan();
  const location = useLocation();
  const [navOpen, setNavOpen] = useState(false);
  const mainRef = useRef<HTMLElement>(null);
  const first = useRef(true);

  useEffect(() => {
    setNavOpen(false);
    if (first.current) {
      first.current = false;
      return;
    }
    // After a navigation, put focus at the top of the new page.
    const h1 = mainRef.current?.querySelector('h1');
    if (h1) {
      h1.setAttribute('tabindex', '-1');
      h1.focus({ preventScroll: false });
    }
  }, [location.pathname]);

  useEffect(() => {
    if (!navOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setNavOpen(false);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [navOpen]);

  return (
    <div className={navOpen ? 'shell nav-open' : 'shell'}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      {navOpen && (
        <button type="button" className="nav-backdrop" aria-label="Close menu" onClick={() => setNavOpen(false)} />
      )}
      <aside className="sidebar" id="sidebar" aria-label="Main navigation">
        <div className="sidebar-brand">
          <span className="brand-mark" aria-hidden="true">
            F
          </span>
          Formcast
        </div>
        <div className="sidebar-workspace" title="Workspace">
          {session.workspace.name}
        </div>
        <nav className="nav">
          {NAV.map((group) => (
            <div key={group.section}>
              <div className="nav-section" aria-hidden="true">
                {group.section}
              </div>
              {group.items
                .filter((item) => !item.needs || can(item.needs))
                .map((item) => (
                  <NavLink key={item.to} to={item.to} end={item.end}>
                    <Icon name={item.icon} />
                    {item.label}
                  </NavLink>
                ))}
            </div>
          ))}
        </nav>
        <div className="sidebar-foot small">
          <a href="/docs" className="nav-doc-link">
            API reference
          </a>
        </div>
      </aside>
      <div className="main">
        <header className="topbar">
          <div className="row">
            <button
              type="button"
              className="btn btn-ghost btn-icon menu-toggle"
              aria-controls="sidebar"
              aria-expanded={navOpen}
              onClick={() => setNavOpen((o) => !o)}
            >
              <Icon name="menu" />
              <span className="visually-hidden">Menu</span>
            </button>
            <span className="topbar-title">{session.workspace.name}</span>
          </div>
          <UserMenu />
        </header>
        <main id="main" className="content" ref={mainRef} tabIndex={-1}>
          <Suspense fallback={<Skeleton lines={6} />}>
            <Outlet />
          </Suspense>
        </main>
      </div>
    </div>
  );
}
