/**
 * Native notifications for new approvals and for escalations. The inbox (the app's background poll and the Approvals
 * view) reports what it sees; each pending approval is announced once — ever, not once per start of the app: the ids
 * already announced are kept in local storage — and so is the urgent notification an escalation wrote
 * (`urgent_notice`), marked urgent (the notification plugin has no urgency level on the desktop, so the mark is the
 * title's "Urgent:" and `extra.urgent`). Notifications go through the notification plugin's own commands
 * (`plugin:notification|…`, allowed in `src-tauri/capabilities/default.json`); a desktop without a notification
 * daemon, a refused permission or any other failure is quiet: the inbox is where approvals live, the notification
 * only points at it.
 */
import { invoke } from "@tauri-apps/api/core";
import type { ApprovalView, NoticeView } from "./bindings";
import { dueLabel } from "./workflow";

export interface NativeNotice {
  title: string;
  body: string;
  /** An escalation: the title says so and the plugin gets `extra: { urgent: true }`. */
  urgent?: boolean;
}

const STORAGE_KEY = "pactwise.approvals.notified";
/** How many announced ids are remembered (the oldest are forgotten first; they have long left the inbox). */
const REMEMBERED = 1000;
/** More new approvals than this at once are announced by one summary instead of one notification each. */
const ONE_BY_ONE = 3;

let permission: Promise<boolean> | null = null;

/** Whether the desktop lets the app notify (asked once per session; Linux and Windows always do). */
function permitted(): Promise<boolean> {
  permission ??= (async () => {
    const granted = await invoke<boolean | null>("plugin:notification|is_permission_granted");
    if (granted !== null) return granted;
    return (await invoke<string>("plugin:notification|request_permission")) === "granted";
  })().catch(() => false);
  return permission;
}

/** Asks the desktop to show a notification. Never throws; `false` when it could not be shown. */
export async function showNative(notice: NativeNotice): Promise<boolean> {
  try {
    if (!(await permitted())) return false;
    const options = notice.urgent
      ? { title: notice.title, body: notice.body, extra: { urgent: true } }
      : { title: notice.title, body: notice.body };
    await invoke("plugin:notification|notify", { options });
    return true;
  } catch {
    return false;
  }
}

/** Forgets the permission answer (tests; a new session asks again anyway). */
export function resetNotificationPermission() {
  permission = null;
}

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}

export class ApprovalNotifier {
  private announced: string[];

  constructor(
    private readonly show: (notice: NativeNotice) => Promise<boolean> = showNative,
    private readonly store: Storage | null = storage(),
    private readonly now: () => Date = () => new Date(),
  ) {
    this.announced = this.load();
  }

  private load(): string[] {
    try {
      const saved = JSON.parse(this.store?.getItem(STORAGE_KEY) ?? "[]");
      return Array.isArray(saved) ? saved.filter((x): x is string => typeof x === "string") : [];
    } catch {
      return [];
    }
  }

  /**
   * Announces the pending approvals of `inbox` that were never announced, and remembers them (before showing
   * anything, so a second report arriving meanwhile does not announce them again; a notification that fails is not
   * retried). Returns how many were new.
   */
  async notice(inbox: readonly ApprovalView[]): Promise<number> {
    const fresh = inbox.filter((a) => a.status === "pending" && !this.announced.includes(a.id));
    const urgent = inbox.filter(
      (a) => a.status === "pending" && a.urgent_notice && !this.announced.includes(escalationKey(a.id)),
    );
    if (fresh.length === 0 && urgent.length === 0) return 0;
    this.announced = [...this.announced, ...fresh.map((a) => a.id), ...urgent.map((a) => escalationKey(a.id))].slice(
      -REMEMBERED,
    );
    try {
      this.store?.setItem(STORAGE_KEY, JSON.stringify(this.announced));
    } catch {
      // Storage full or unavailable: they are remembered for this session.
    }
    for (const a of urgent) {
      await this.show({ title: `Urgent: ${a.title}`, body: a.urgent_notice ?? "", urgent: true });
    }
    if (fresh.length === 0) return urgent.length;
    if (fresh.length > ONE_BY_ONE) {
      await this.show({
        title: `${fresh.length} new approvals need a decision`,
        body: fresh.map((a) => a.title).slice(0, ONE_BY_ONE).join("; ") + "; …",
      });
    } else {
      for (const a of fresh) {
        await this.show({ title: "Approval needed", body: `${a.title} (${dueLabel(a.due_at, this.now())})` });
      }
    }
    return fresh.length + urgent.length;
  }
}

/** The remembered id of an approval's escalation (its own entry: the approval was announced when it arrived). */
function escalationKey(id: string): string {
  return `escalated:${id}`;
}

const NOTICES_KEY = "pactwise.agents.notified";

/**
 * Native notifications for the agents' urgent notices (a close deadline, a high risk, an urgent request): each unseen
 * urgent notice is announced once, ever (ids kept in local storage like the approvals'). The others wait in the
 * Runs area's "From the agents" list.
 */
export class AgentNoticeNotifier {
  private announced: string[];

  constructor(
    private readonly show: (notice: NativeNotice) => Promise<boolean> = showNative,
    private readonly store: Storage | null = storage(),
  ) {
    try {
      const saved = JSON.parse(this.store?.getItem(NOTICES_KEY) ?? "[]");
      this.announced = Array.isArray(saved) ? saved.filter((x): x is string => typeof x === "string") : [];
    } catch {
      this.announced = [];
    }
  }

  /** Announces the unseen urgent notices never announced; returns how many. */
  async notice(notices: readonly NoticeView[]): Promise<number> {
    const fresh = notices.filter((n) => n.urgent && !n.seen && !this.announced.includes(n.id));
    if (fresh.length === 0) return 0;
    this.announced = [...this.announced, ...fresh.map((n) => n.id)].slice(-REMEMBERED);
    try {
      this.store?.setItem(NOTICES_KEY, JSON.stringify(this.announced));
    } catch {
      // Remembered for this session.
    }
    for (const n of fresh.slice(0, ONE_BY_ONE)) await this.show({ title: n.title, body: n.message, urgent: true });
    if (fresh.length > ONE_BY_ONE) {
      await this.show({ title: `${fresh.length - ONE_BY_ONE} more notices from the agents`, body: "See Runs → Ask the agents." });
    }
    return fresh.length;
  }
}

let sharedAgentNotifier: AgentNoticeNotifier | null = null;

/** The app's one agent-notice notifier (the background poll and the Runs area's request panel share it). */
export function agentNoticeNotifier(): AgentNoticeNotifier {
  sharedAgentNotifier ??= new AgentNoticeNotifier();
  return sharedAgentNotifier;
}
