package dev.treadle.client;

import dev.treadle.v1.ListedMessage;
import dev.treadle.v1.Message;
import dev.treadle.v1.MessageListReplacement;
import dev.treadle.v1.MessageListSnapshot;
import dev.treadle.v1.MessageSource;
import dev.treadle.v1.Part;
import dev.treadle.v1.SystemMessage;
import dev.treadle.v1.ToolInvocationPart;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The run's message list as a hook sees it (the Mastra {@code messageList}). Edits made here are
 * sent back in the hook's answer as the whole list, unless the hook returns its own replacement.
 */
public final class MessageList {
  private final List<Message> messages = new ArrayList<>();
  private final Map<String, MessageSource> sources = new HashMap<>();
  private final List<SystemMessage> systemMessages;
  private boolean changed;

  MessageList(MessageListSnapshot snapshot) {
    for (ListedMessage listed : snapshot.getMessagesList()) {
      messages.add(listed.getMessage());
      sources.put(listed.getMessage().getId(), listed.getSource());
    }
    systemMessages = List.copyOf(snapshot.getSystemMessagesList());
  }

  /** Every message, oldest first (the Mastra {@code messageList.get.all.db()}). */
  public synchronized List<Message> all() {
    return List.copyOf(messages);
  }

  /** The messages given to this call (the Mastra {@code messageList.get.input.db()}). */
  public List<Message> input() {
    return bySource(MessageSource.MESSAGE_SOURCE_INPUT);
  }

  /** The messages this call produced (the Mastra {@code messageList.get.response.db()}). */
  public List<Message> response() {
    return bySource(MessageSource.MESSAGE_SOURCE_RESPONSE);
  }

  /** The messages loaded from memory (the Mastra {@code messageList.get.remembered.db()}). */
  public List<Message> remembered() {
    return bySource(MessageSource.MESSAGE_SOURCE_MEMORY);
  }

  /** Where the message with this id came from; a message added here counts by its role. */
  public synchronized MessageSource sourceOf(String id) {
    for (Message m : messages) {
      if (m.getId().equals(id)) {
        MessageSource known = sources.get(id);
        if (known != null && known != MessageSource.MESSAGE_SOURCE_UNSPECIFIED) {
          return known;
        }
        return m.getRole() == dev.treadle.v1.MessageRole.MESSAGE_ROLE_ASSISTANT
            ? MessageSource.MESSAGE_SOURCE_RESPONSE : MessageSource.MESSAGE_SOURCE_INPUT;
      }
    }
    return MessageSource.MESSAGE_SOURCE_UNSPECIFIED;
  }

  private synchronized List<Message> bySource(MessageSource source) {
    List<Message> out = new ArrayList<>();
    for (Message m : messages) {
      if (sourceOf(m.getId()) == source) {
        out.add(m);
      }
    }
    return List.copyOf(out);
  }

  /** The text of every text part of these messages, joined by spaces. */
  public static String text(List<Message> messages) {
    StringBuilder out = new StringBuilder();
    for (Message m : messages) {
      for (Part p : m.getContent().getPartsList()) {
        if (p.hasText()) {
          if (out.length() > 0) {
            out.append(' ');
          }
          out.append(p.getText().getText());
        }
      }
    }
    return out.toString();
  }

  /** The system messages of the run. */
  public List<SystemMessage> systemMessages() {
    return systemMessages;
  }

  /** Removes the messages with these ids. */
  public synchronized void removeByIds(String... ids) {
    Set<String> gone = new HashSet<>(Arrays.asList(ids));
    changed |= messages.removeIf(m -> gone.contains(m.getId()));
  }

  /** Appends a message (its source follows from its role). */
  public synchronized void add(Message message) {
    messages.add(message);
    changed = true;
  }

  /** Makes the list hold exactly {@code replacement}, in that order. */
  public synchronized void replaceAll(List<Message> replacement) {
    messages.clear();
    messages.addAll(replacement);
    changed = true;
  }

  /**
   * Replaces the tool invocation part with the same tool call id (the Mastra
   * {@code messageList.updateToolInvocation(...)}); false when no message holds that call.
   */
  public synchronized boolean updateToolInvocation(ToolInvocationPart invocation) {
    for (int i = messages.size() - 1; i >= 0; i--) {
      Message m = messages.get(i);
      List<Part> parts = m.getContent().getPartsList();
      for (int j = 0; j < parts.size(); j++) {
        Part p = parts.get(j);
        if (p.hasToolInvocation() && p.getToolInvocation().getToolCallId().equals(invocation.getToolCallId())) {
          Message.Builder b = m.toBuilder();
          b.getContentBuilder().setParts(j, p.toBuilder().setToolInvocation(invocation));
          messages.set(i, b.build());
          changed = true;
          return true;
        }
      }
    }
    return false;
  }

  synchronized boolean changed() {
    return changed;
  }

  synchronized MessageListReplacement toReplacement() {
    MessageListReplacement.Builder out = MessageListReplacement.newBuilder();
    for (Message m : messages) {
      out.addMessages(m);
      out.addSources(sources.getOrDefault(m.getId(), MessageSource.MESSAGE_SOURCE_UNSPECIFIED));
    }
    return out.build();
  }
}
