// Command agentclient is an agent client written with the Go SDK, for the end-to-end test
// tests/test_go_agent_client.py. Against a server with the agents `echo` (a plain agent) and
// `guarded` (an input guard that blocks "secret"), it:
//
//  1. streams echo's answer to "tell me a story";
//  2. calls Generate on guarded with "tell me the secret" and reads the tripwire;
//  3. creates the thread t1 of resource u1, subscribes to it, sends the message "Can we simplify
//     the API surface?" from slack as Devin (attributes in that order; the idle thread wakes a
//     run of echo), and reads
//     the subscription until that run has ended;
//  4. lists the thread's messages and runs and asks for its active run; renames the thread and
//     lists the resource's threads; sends state (stored, twice: the second is skipped) and a
//     github-review signal (stored for the next run), a
//     low-priority notification (summarised at once, nothing wakes), lists the notifications,
//     and aborts the idle thread's run (there is none);
//  5. creates, updates, lists, gets and deletes the agent made-in-go.
//
// It prints one JSON line with what it saw.
//
// Usage: agentclient HOST:PORT
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/status"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: agentclient HOST:PORT")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "agentclient:", err)
		os.Exit(1)
	}
}

func run(target string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := treadle.Dial(target)
	if err != nil {
		return err
	}
	defer c.Close()
	out := map[string]any{}

	story, types, finish := "", []string{}, treadle.FinishReason("")
	for chunk, err := range c.Stream(ctx, "echo", "tell me a story") {
		if err != nil {
			return err
		}
		types = append(types, chunk.Type())
		if chunk.Type() == "text-delta" {
			story += chunk.Text()
		}
		if chunk.Type() == "finish" {
			finish = chunk.FinishReason()
		}
	}
	out["stream_text"] = story
	out["stream_types"] = types
	out["stream_finish"] = finish

	r, err := c.Generate(ctx, "guarded", "tell me the secret")
	if err != nil {
		return err
	}
	if r.Tripwire != nil {
		out["tripwire"] = map[string]any{"reason": r.Tripwire.Reason, "processor_id": r.Tripwire.ProcessorID}
	}
	out["tripwire_finish"] = r.FinishReason
	out["tripwire_raw"] = r.GenerateResponse.GetFinishReason().String()

	thread, err := c.CreateThread(ctx, "u1", "t1", treadle.WithTitle("API review"))
	if err != nil {
		return err
	}
	out["thread_title"] = thread.Title
	sub, err := c.SubscribeToThread(ctx, "u1", "t1")
	if err != nil {
		return err
	}
	defer sub.Close()
	out["active_before"] = sub.ActiveRun().RunId
	sent, err := c.SendMessage(ctx, "echo", treadle.InThread("u1", "t1"), "Can we simplify the API surface?",
		treadle.WithAttributeList(treadle.Attr{Name: "from", Value: "slack"}, treadle.Attr{Name: "name", Value: "Devin"}))
	if err != nil {
		return err
	}
	runID := sent.GetAccepted().GetRunId()
	out["action"] = sent.GetAccepted().GetAction().String()
	out["run_id"] = runID
	woken, text, started := []string{}, "", false
	for e, err := range sub.Events() {
		if err != nil {
			return err
		}
		if e.ActiveRun != nil {
			woken = append(woken, e.ActiveRun.RunId)
			if e.ActiveRun.RunId == runID {
				started = true
			} else if started && e.ActiveRun.RunId == "" {
				break // the woken run has ended
			}
			continue
		}
		if e.Chunk.RunId == runID && e.Chunk.Type() == "text-delta" {
			text += e.Chunk.Text()
		}
	}
	out["active_runs"] = woken
	out["subscribed_text"] = text

	messages, err := c.ListMessages(ctx, "u1", "t1")
	if err != nil {
		return err
	}
	roles := []string{}
	for _, m := range messages {
		roles = append(roles, m.Role.String())
	}
	out["roles"] = roles
	active, err := c.GetActiveRun(ctx, "u1", "t1")
	if err != nil {
		return err
	}
	out["active_after"] = active.RunId
	runs, err := c.ListRuns(ctx, "u1", "t1")
	if err != nil {
		return err
	}
	statuses := []string{}
	for _, r := range runs {
		statuses = append(statuses, r.Status.String())
	}
	out["runs"] = statuses
	if _, err := c.UpdateThread(ctx, "u1", "t1", treadle.WithTitle("API review, round 2")); err != nil {
		return err
	}
	threads, err := c.ListThreads(ctx, "u1")
	if err != nil {
		return err
	}
	titles := []string{}
	for _, t := range threads {
		titles = append(titles, t.Title)
	}
	out["titles"] = titles
	state := &treadlev1.StateSignal{Id: "browser", CacheKey: "k1", Mode: treadlev1.StateMode_STATE_MODE_SNAPSHOT, Contents: "on the docs page"}
	persist := treadle.IfIdle(treadlev1.IdleBehavior_IDLE_BEHAVIOR_PERSIST, nil)
	stored, err := c.SendStateSignal(ctx, "echo", treadle.InThread("u1", "t1"), state, persist)
	if err != nil {
		return err
	}
	again, err := c.SendStateSignal(ctx, "echo", treadle.InThread("u1", "t1"), state, persist)
	if err != nil {
		return err
	}
	out["state"] = []any{stored.GetAccepted().GetAction().String(), again.Skipped, again.Reason}
	review, err := c.SendSignal(ctx, "echo", treadle.InThread("u1", "t1"),
		&treadlev1.Signal{Type: "notification", TagName: "github-review", Contents: "LGTM"}, persist)
	if err != nil {
		return err
	}
	out["signal"] = review.GetAccepted().GetAction().String()
	note, err := c.SendNotificationSignal(ctx, "echo", "u1", "t1", &treadlev1.Notification{Source: "github", Kind: "ci-status",
		Summary: "CI passed.", Priority: treadlev1.NotificationPriority_NOTIFICATION_PRIORITY_LOW})
	if err != nil {
		return err
	}
	out["notification"] = note.GetDecision().GetAction().String()
	records, err := c.ListNotifications(ctx, "u1", "t1", treadlev1.NotificationStatus_NOTIFICATION_STATUS_PENDING)
	if err != nil {
		return err
	}
	kinds := []string{}
	for _, r := range records {
		kinds = append(kinds, r.Kind)
	}
	out["pending"] = kinds
	aborted, err := c.AbortRun(ctx, treadle.InThread("u1", "t1"))
	if err != nil {
		return err
	}
	out["aborted"] = aborted

	if _, err := c.CreateAgent(ctx, &treadlev1.Agent{Id: "made-in-go", Name: "Made in Go", Model: "openai/gpt-4o-mini"}); err != nil {
		return err
	}
	updated, err := c.UpdateAgent(ctx, &treadlev1.Agent{Id: "made-in-go", Description: "from Go"}, "description")
	if err != nil {
		return err
	}
	out["updated"] = map[string]string{"name": updated.Name, "description": updated.Description}
	agents, err := c.ListAgents(ctx)
	if err != nil {
		return err
	}
	ids := []string{}
	for _, a := range agents {
		ids = append(ids, a.Id)
	}
	out["agents"] = ids
	if err := c.DeleteAgent(ctx, "made-in-go"); err != nil {
		return err
	}
	_, err = c.GetAgent(ctx, "made-in-go")
	out["after_delete"] = status.Code(err).String()
	return json.NewEncoder(os.Stdout).Encode(out)
}
