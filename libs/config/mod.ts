/** Typed configuration read once from the environment, with the embedded defaults. */

export { type Clock, fixedClock, systemClock } from "./src/clock.ts";
export { type Config, ConfigError, DB_POOL_DEFAULTS, loadConfig } from "./src/config.ts";
export { describeError } from "./src/error_fields.ts";
export { createLogger, type Logger } from "./src/logger.ts";
export { rawSetting } from "./src/read_setting.ts";
export {
  readServerRecord,
  recordServer,
  resolvePublicBase,
  type ServerRecord,
} from "./src/server_record.ts";
export {
  SETTINGS,
  type SettingApp,
  type SettingDecl,
  type SettingSection,
  SOCIAL_PLATFORMS,
  type SocialPlatform,
  settingDecl,
} from "./src/settings.ts";
export { envExampleText, readmeWithTables } from "./src/settings_docs.ts";
export {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_S,
  type WebhookSettings,
} from "./src/webhook_settings.ts";
