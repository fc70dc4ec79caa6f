import { Type } from "@sinclair/typebox";
import {
  deleteSubscriber,
  getSubscriber,
  reactivateSubscriber,
  SubscriberDeleted,
  SubscriberDetailAnswer,
  subscriberView,
} from "@site/domain/newsletters";
import { getOwnSite } from "@site/domain/sites";
import { Id, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

const SubscriberId = Id("a subscriber of the site, from list_subscribers or add_subscriber");

/** One subscriber: read, reactivate, delete; the same models and domain functions as routes/subscribers.ts. */
export const SUBSCRIBER_TOOLS: Tool[] = [
  tool({
    name: "get_subscriber",
    title: "Read one newsletter subscriber",
    description:
      "One subscriber with its status, consent (source, when confirmed) and bounce log, newest first (when, status code, kind: hard, soft or policy, the receiver's diagnostic). A bounced one can be made active again with reactivate_subscriber once the address works. Needs content:read.",
    operation: "getSubscriber",
    output: SubscriberDetailAnswer,
    input: Type.Object({ siteId: SiteId, subscriberId: SubscriberId }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const subscriber = await getSubscriber(deps, site, args.subscriberId, subscriberView);
      return { value: { subscriber } };
    },
  }),
  tool({
    name: "reactivate_subscriber",
    title: "Make a bounced subscriber active again",
    description:
      "An admin's undo of a bounce, once the address works again: a bounced subscriber becomes active and its earlier soft bounces no longer count (the bounce log is kept). Any other status is answered unchanged. Needs content:write.",
    operation: "reactivateSubscriber",
    output: SubscriberDetailAnswer,
    input: Type.Object({ siteId: SiteId, subscriberId: SubscriberId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const subscriber = await reactivateSubscriber(deps, site, args.subscriberId, subscriberView);
      return { value: { subscriber }, note: `Subscriber ${subscriber.email} is ${subscriber.status}.` };
    },
  }),
  tool({
    name: "delete_subscriber",
    title: "Delete a newsletter subscriber",
    description:
      "Deletes a subscriber and its bounce log: it gets no further campaign. Adding the address again (add_subscriber) starts afresh. Needs content:write.",
    operation: "deleteSubscriber",
    output: SubscriberDeleted,
    input: Type.Object({ siteId: SiteId, subscriberId: SubscriberId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      await deleteSubscriber(deps, site, args.subscriberId);
      return {
        value: { deleted: true, subscriberId: args.subscriberId },
        note: `Subscriber ${args.subscriberId} is deleted; list_subscribers shows the others.`,
      };
    },
  }),
];
