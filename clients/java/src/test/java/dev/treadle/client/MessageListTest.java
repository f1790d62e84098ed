package dev.treadle.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.treadle.v1.ListedMessage;
import dev.treadle.v1.Message;
import dev.treadle.v1.MessageContent;
import dev.treadle.v1.MessageListSnapshot;
import dev.treadle.v1.MessageRole;
import dev.treadle.v1.MessageSource;
import dev.treadle.v1.Part;
import dev.treadle.v1.TextPart;
import java.util.List;
import org.junit.jupiter.api.Test;

class MessageListTest {
  static Message message(String id, MessageRole role, String text) {
    return Message.newBuilder().setId(id).setRole(role).setContent(MessageContent.newBuilder()
        .addParts(Part.newBuilder().setText(TextPart.newBuilder().setText(text)))).build();
  }

  @Test
  void theInputResponseAndRememberedViewsFollowEachMessagesSource() {
    Message old = message("m1", MessageRole.MESSAGE_ROLE_USER, "earlier");
    Message asked = message("m2", MessageRole.MESSAGE_ROLE_USER, "my secret");
    Message answered = message("m3", MessageRole.MESSAGE_ROLE_ASSISTANT, "ok");
    MessageList list = new MessageList(MessageListSnapshot.newBuilder()
        .addMessages(ListedMessage.newBuilder().setMessage(old).setSource(MessageSource.MESSAGE_SOURCE_MEMORY))
        .addMessages(ListedMessage.newBuilder().setMessage(asked).setSource(MessageSource.MESSAGE_SOURCE_INPUT))
        .addMessages(ListedMessage.newBuilder().setMessage(answered).setSource(MessageSource.MESSAGE_SOURCE_RESPONSE))
        .build());
    assertEquals(List.of(old), list.remembered());
    assertEquals(List.of(asked), list.input());
    assertEquals(List.of(answered), list.response());
    Message added = message("m4", MessageRole.MESSAGE_ROLE_ASSISTANT, "more");
    list.add(added); // a new message counts by its role
    assertEquals(List.of(answered, added), list.response());
    assertEquals("my secret", MessageList.text(list.input()));
    assertEquals("earlier my secret ok more", MessageList.text(list.all()));
  }
}
