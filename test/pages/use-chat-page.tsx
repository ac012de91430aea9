import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";

/** What a React developer writes against a Vigil agent: useChat with the agent's chat URL and a bearer token. */
declare const VIGIL: { url: string; agentId: string; token: string };

function Chat() {
  const { messages, sendMessage, status, addToolApprovalResponse } = useChat({
    transport: new DefaultChatTransport({ api: `${VIGIL.url}/v1/agents/${VIGIL.agentId}/chat`, headers: { Authorization: `Bearer ${VIGIL.token}` } }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  return (
    <div>
      <p id="status">{status}</p>
      {messages.map((m) => (
        <div key={m.id} className={`message ${m.role}`}>
          {m.parts.map((part, i) => {
            if (part.type === "text") return <span key={i} className="text">{part.text}</span>;
            if (part.type !== "dynamic-tool") return null;
            if (part.state === "approval-requested") {
              return <button key={i} id="approve" onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: true })}>Approve {part.toolName}</button>;
            }
            return <span key={i} className={`tool ${part.state}`}>{part.toolName}: {part.state}</span>;
          })}
        </div>
      ))}
      <form onSubmit={(e) => { e.preventDefault(); void sendMessage({ text: input }); setInput(""); }}>
        <input id="input" value={input} onChange={(e) => setInput(e.target.value)} />
        <button id="send" type="submit">Send</button>
      </form>
    </div>
  );
}

createRoot(document.getElementById("root")!).render(<Chat />);
