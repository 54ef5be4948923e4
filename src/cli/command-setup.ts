/**
 * Each command declares where it is defined what its action needs (`actionWith`), and the
 * program's one pre-action hook (`loadNeedsBeforeActions`) loads it, once, before the action
 * runs: the configuration, the entities file, the topology when declared, the logger. A bad
 * configuration or file is thus reported (exit 78) before the action connects to anything, and
 * no action reads the environment or a file of settings itself.
 */
import { Command } from 'commander';
import { loadConfig, type Config, type ConfigPart } from '../config';
import type { EntityCatalogue } from '../core/entity-catalogue';
import type { Topology } from '../core/topology';
import { loadEntities } from '../ops/load-entities';
import { loadTopology } from '../ops/load-topology';
import { createCommandLogger, createLogger, type Logger } from '../ops/logger';

/**
 * `uses`: the parts the command connects to or reads, so that in production (TB_ENV=production)
 * it requires only their settings: the topics-apply Job has no database Secret, and needs none.
 * Every command reads the entities file. `logTo`: stdout for the service and its deployment
 * steps; stderr for an operator command, whose stdout holds only its result.
 */
export type Needs<U extends ConfigPart = ConfigPart> = Readonly<{ uses: readonly U[]; logTo: 'stdout' | 'stderr' }>;

/** What the action is handed: the topology only when the command declares it. */
export type Setup<U extends ConfigPart = ConfigPart> = Readonly<
  { config: Config; catalogue: EntityCatalogue; logger: Logger } & ('topology' extends U ? { topology: Topology } : unknown)
>;

/** Each from the one before: the configuration names the files, and the topology's event topics are the entities' events. */
export function loadSetup<U extends ConfigPart>(needs: Needs<U>, env: NodeJS.ProcessEnv): Setup<U> {
  const config = loadConfig(env, { uses: needs.uses });
  const catalogue = loadEntities(config.entitiesPath);
  const topology = (needs.uses as readonly ConfigPart[]).includes('topology') ? loadTopology(config.topologyPath, catalogue) : undefined;
  const logger = needs.logTo === 'stdout' ? createLogger(config.logLevel) : createCommandLogger(config.logLevel);
  return { config, catalogue, logger, ...(topology !== undefined && { topology }) } as Setup<U>;
}

/** A commander Command whose action is handed what it declared; its subcommands are SetupCommands too. */
export class SetupCommand extends Command {
  #needs: Needs | undefined;
  #setup: Setup | undefined;

  override createCommand(name?: string): SetupCommand {
    return new SetupCommand(name);
  }

  /** What the command declared (undefined for a command that only groups others, as `topics`). */
  get needs(): Needs | undefined {
    return this.#needs;
  }

  /**
   * The action, declared with what it needs; commander's arguments follow the setup. (`never[]`:
   * each action names the types of its own arguments, as with commander's `action`.)
   */
  actionWith<U extends ConfigPart>(needs: Needs<U>, action: (setup: Setup<U>, ...args: never[]) => void | Promise<void>): this {
    this.#needs = needs;
    return this.action((...args: unknown[]) => {
      if (this.#setup === undefined) throw new Error(`${this.name()}: its needs were not loaded: the program lacks loadNeedsBeforeActions`);
      return action(this.#setup as Setup<U>, ...(args as never[]));
    });
  }

  /** The program's one pre-action hook: loads what the command about to run declared. */
  loadNeedsBeforeActions(env: NodeJS.ProcessEnv): this {
    return this.hook('preAction', (_program, command) => {
      if (!(command instanceof SetupCommand) || command.#needs === undefined) throw new Error(`${command.name()}: the command declares no needs (actionWith)`);
      command.#setup = loadSetup(command.#needs, env);
    });
  }
}

/** The command a command line names (`['topics', 'apply', '--grow-partitions']`: topics apply), undefined when it names none. */
export function commandOf(program: SetupCommand, args: readonly string[]): SetupCommand | undefined {
  let command: Command = program;
  for (const arg of args) {
    const sub = command.commands.find((c) => c.name() === arg);
    if (sub === undefined) break;
    command = sub;
  }
  return command === program ? undefined : (command as SetupCommand);
}
