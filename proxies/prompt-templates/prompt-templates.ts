// prompt-templates: an ACP proxy that expands slash commands from a templates file. A prompt
// whose first text block starts with `/name args` is sent to the agent as the template of
// `name` with `{{args}}` replaced; every session is told the commands with
// `available_commands_update` (merged into the agent's own list when it sends one).
//
// Options: `--templates PATH`, a JSON file `{"commands": [{"name", "description", "hint"?,
// "template"}]}`. Under the sandbox, grant its directory read-only; nothing else is needed.

import type { AvailableCommand, ContentBlock, PromptRequest, SessionNotification } from "@agentclientprotocol/sdk";

import { type NotificationDecision, type Peers, type Proxy, type RequestDecision, args, log, readTextFile, run } from "../../kits/typescript/src/index.js";

export interface Template {
  name: string;
  description: string;
  hint?: string;
  template: string;
}

/** `/name rest` at the start of `text`, if `name` is one of ours. */
export function expand(templates: Map<string, Template>, text: string): string | undefined {
  const match = /^\/([A-Za-z0-9_-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  const template = match ? templates.get(match[1]) : undefined;
  if (!match || !template) return undefined;
  const rest = (match[2] ?? "").trim();
  return template.template.split("{{args}}").join(rest);
}

export class PromptTemplates implements Proxy {
  name = "prompt-templates";
  private readonly templates: Map<string, Template>;

  constructor(templates: Template[]) {
    this.templates = new Map(templates.map((t) => [t.name, t]));
  }

  commands(): AvailableCommand[] {
    return [...this.templates.values()].map((t) => ({
      name: t.name,
      description: t.description,
      ...(t.hint ? { input: { hint: t.hint } } : {}),
    }));
  }

  onSessionStart(peers: Peers, sessionId: string): void {
    const update: SessionNotification = {
      sessionId,
      update: { sessionUpdate: "available_commands_update", availableCommands: this.commands() },
    };
    peers.notifyEditor("session/update", update);
  }

  onUpdate(_peers: Peers, params: SessionNotification): NotificationDecision {
    const update = params.update;
    if (update.sessionUpdate !== "available_commands_update") return undefined;
    const theirs = update.availableCommands.filter((c) => !this.templates.has(c.name));
    return { ...params, update: { ...update, availableCommands: [...theirs, ...this.commands()] } };
  }

  onPrompt(_peers: Peers, params: PromptRequest): RequestDecision {
    const index = params.prompt.findIndex((block) => block.type === "text");
    const first = params.prompt[index];
    if (!first || first.type !== "text") return undefined;
    const expanded = expand(this.templates, first.text);
    if (expanded === undefined) return undefined;
    log.info(`session ${params.sessionId}: ${first.text.trim().split(/\s/)[0]} expanded`);
    const prompt: ContentBlock[] = [...params.prompt];
    prompt[index] = { ...first, text: expanded };
    return { ...params, prompt };
  }
}

export function loadTemplates(path: string): Template[] {
  const parsed = JSON.parse(readTextFile(path)) as { commands?: Template[] };
  return parsed.commands ?? [];
}

export function main(): void {
  const argv = args();
  const at = argv.indexOf("--templates");
  if (at < 0 || !argv[at + 1]) throw new Error("usage: prompt-templates --templates PATH");
  run(new PromptTemplates(loadTemplates(argv[at + 1])));
}
