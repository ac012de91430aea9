import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from "ai";

/** The AI SDK's chat with its state in plain arrays: what `useChat` does, without a UI framework. */
class ArrayChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => void (this.messages = [...this.messages, message]);
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: UIMessage) => void (this.messages = this.messages.map((m, i) => (i === index ? message : m)));
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

export class TestChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, "messages">) {
    super({ ...init, state: new ArrayChatState() });
  }
}
