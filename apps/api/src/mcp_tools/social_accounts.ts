import { Type } from "@sinclair/typebox";
import {
  ConnectAccountBody,
  ConnectConfirmBody,
  ConnectStartBody,
  ConnectStarted,
  CreatorInfoAnswer,
  confirmConnect,
  connectSocialAccount,
  disconnectSocialAccount,
  listSocialAccounts,
  SocialAccountAnswer,
  SocialAccountDisconnected,
  SocialAccountList,
  startConnect,
  tiktokCreatorInfo,
} from "@site/domain/social";
import { createOAuthPort } from "@site/social";
import { Id } from "./inputs.ts";
import { adapters } from "./social_adapters.ts";
import { type Tool, tool } from "./tool.ts";

/** Connected social accounts: the same models and domain functions as routes/social_accounts.ts. */
export const SOCIAL_ACCOUNT_TOOLS: Tool[] = [
  tool({
    name: "list_social_accounts",
    title: "List connected social accounts",
    description:
      "Lists the organization's connected social accounts (never their tokens): id (what create_social_post takes in accountIds), platform, the platform's own account id, permissions, and status (reconnect_required: connect it again). Free. Needs social:write.",
    operation: "listSocialAccounts",
    output: SocialAccountList,
    input: Type.Object({}),
    readOnly: true,
    run: async (deps, principal) => {
      const accounts = await listSocialAccounts(deps, principal);
      return {
        value: { accounts },
        note:
          accounts.length === 0
            ? "No account is connected: add one with connect_social_account (a token you hold) or start_social_connection (the user approves in a browser)."
            : `${accounts.length} account(s); pass their ids to create_social_post.`,
      };
    },
  }),
  tool({
    name: "connect_social_account",
    title: "Add a social account with a token",
    description:
      "Adds (or reconnects) a social account from an access token you already hold: platform, the platform's account id, the token (stored encrypted, never returned), and optionally a refresh token, its expiry and the granted permissions. Connecting the same platform account again replaces its token. Needs social:write.",
    operation: "connectSocialAccount",
    output: SocialAccountAnswer,
    input: Type.Object({
      ...ConnectAccountBody.properties,
      expiresAt: Type.Optional(Type.String({ ...ConnectAccountBody.properties.expiresAt, maxLength: 40 })),
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const { account, created } = await connectSocialAccount(deps, principal, args);
      return {
        value: { account },
        note: `${created ? "Connected" : "Reconnected"} ${account.platform} account ${account.id}; pass this id in accounts to create_social_post.`,
      };
    },
  }),
  tool({
    name: "start_social_connection",
    title: "Start connecting a social account (OAuth)",
    description:
      "Starts an OAuth connection: answers an authorizeUrl for the user to open in a browser and approve (that step cannot be done by an agent). When the platform sends the browser back, the account is connected, or the browser is shown a one-time confirmation that confirm_social_connection takes with this state. Then list_social_accounts shows it. NOT_CONFIGURED when the server has no app for that platform. Needs social:write.",
    operation: "startSocialConnection",
    output: ConnectStarted,
    input: Type.Object({
      ...ConnectStartBody.properties,
      redirectUri: Type.Optional(
        Type.String({ ...ConnectStartBody.properties.redirectUri, pattern: "^https?://" }),
      ),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const out = await startConnect(deps, principal, args, createOAuthPort(deps.config));
      return {
        value: out,
        note: `Give the user this link to approve the connection (valid 10 minutes): ${out.authorizeUrl}. Then call list_social_accounts; if the browser showed a confirmation code instead, call confirm_social_connection with state ${out.state} and that code.`,
      };
    },
  }),
  tool({
    name: "confirm_social_connection",
    title: "Confirm a social connection the platform granted",
    description:
      "For a connection approved in another browser than the one that started it: takes the state from start_social_connection and the one-time confirmation the browser was shown (within 10 minutes, once, by the same user). Needs social:write.",
    operation: "confirmSocialConnection",
    output: SocialAccountAnswer,
    input: ConnectConfirmBody,
    readOnly: false,
    run: async (deps, principal, args) => {
      const account = await confirmConnect(deps, principal, args);
      return {
        value: { account },
        note: `Connected ${account.platform} account ${account.id}; pass this id in accounts to create_social_post.`,
      };
    },
  }),
  tool({
    name: "disconnect_social_account",
    title: "Disconnect a social account",
    description:
      "Erases a connected account's tokens: it is no longer listed or published to; its posts' history stays. Connecting the same platform account again revives it. Needs social:write.",
    operation: "disconnectSocialAccount",
    output: SocialAccountDisconnected,
    input: Type.Object({ accountId: Id("a connected account, from list_social_accounts") }),
    readOnly: false,
    run: async (deps, principal, args) => {
      await disconnectSocialAccount(deps, principal, args.accountId);
      return {
        value: { disconnected: true, accountId: args.accountId },
        note: `Disconnected ${args.accountId}; its tokens are erased.`,
      };
    },
  }),
  tool({
    name: "get_tiktok_creator_info",
    title: "Read a TikTok account's posting options",
    description:
      "Asks TikTok for a connected account's posting options (creator_info): the privacy levels it offers (`selectablePrivacyLevels`: the ones this server may post with now), whether comments, duets and stitches are off, the longest video. TikTok requires each post to choose one: pass it as platformOptions.tiktok.privacyLevel to create_social_post. VALIDATION_ERROR for an account of another platform or one to reconnect; SERVICE_UNAVAILABLE when TikTok cannot answer. Needs social:write.",
    operation: "getSocialCreatorInfo",
    output: CreatorInfoAnswer,
    input: Type.Object({ accountId: Id("a connected TikTok account, from list_social_accounts") }),
    readOnly: true,
    openWorld: true,
    run: async (deps, principal, args) => {
      const creatorInfo = await tiktokCreatorInfo(deps, principal, args.accountId, adapters(deps));
      return {
        value: { creatorInfo },
        note: `Choose one of ${creatorInfo.selectablePrivacyLevels.join(", ")} as platformOptions.tiktok.privacyLevel in create_social_post.`,
      };
    },
  }),
];
