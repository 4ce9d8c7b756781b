package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/baton-flow/baton/libs/client"
)

// The bodies of these examples are the Go snippets of docs/sdk.md; TestDocsSnippets keeps
// the two in step.

// A first program: run a workflow and wait for its end.
func Example() {
	ctx := context.Background()
	c, err := client.FromEnv() // BATON_SERVER, BATON_TOKEN
	if err != nil {
		log.Fatal(err)
	}
	run, err := c.SubmitAndWait(ctx, "infra", "deploy", &client.WorkflowSubmitRequest{
		Params: map[string]any{"version": "1.4.2"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("run %s ended %s\n", run.ID, run.Status)
	if !run.Succeeded() {
		os.Exit(1)
	}
}

// Options: a server, a token, an HTTP client and a user agent.
func ExampleNew() {
	c, err := client.New("https://baton.example.com",
		client.WithToken(os.Getenv("BATON_TOKEN")),
		client.WithHTTPClient(&http.Client{Transport: http.DefaultTransport}),
		client.WithUserAgent("release-bot/2.1"),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// Every error the API answers is a *client.Error.
func ExampleError() {
	ctx := context.Background()
	c, _ := client.FromEnv()
	_, err := c.GetWorkflow(ctx, "infra", "deploy")
	switch {
	case client.HasReason(err, "TEAM_NOT_FOUND"):
		fmt.Println("no team infra")
	case client.IsNotFound(err):
		fmt.Println("no workflow deploy in infra")
	case err != nil:
		var e *client.Error
		if errors.As(err, &e) {
			fmt.Println(e.StatusCode, e.Reason, e.Message, "trace", e.TraceID)
		}
		log.Fatal(err)
	}
}

// Searches are iterators over every page.
func ExampleClient_WorkflowRuns() {
	ctx := context.Background()
	c, _ := client.FromEnv()
	failed := client.RunQuery{
		Statuses: []string{client.StatusFailed},
		From:     time.Now().Add(-24 * time.Hour),
	}
	for run, err := range c.WorkflowRuns(ctx, "infra", failed) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(run.ID, run.WorkflowName, run.StatusMessage)
	}
}

// One page at a time, when the caller pages itself.
func ExampleClient_QueryWorkflowRuns() {
	ctx := context.Background()
	c, _ := client.FromEnv()
	page, err := c.QueryWorkflowRuns(ctx, "infra", client.RunQuery{Page: 0, Limit: 20})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d runs\n", page.NumberOfElements, page.TotalElements)
}

// Watching a run as it moves.
func ExampleClient_Watch() {
	ctx := context.Background()
	c, _ := client.FromEnv()
	for run, err := range c.Watch(ctx, "infra", "0193a4c2-7d1e-7b7a-9c0e-2f6a1b3c4d5e") {
		if err != nil {
			log.Fatal(err)
		}
		for _, task := range run.Tasks {
			fmt.Printf("  %-20s %s\n", task.Name, task.Status)
		}
		fmt.Println(run.Status, run.Phase)
	}
}

// Following a task run's log as it is written.
func ExampleClient_TaskRunLogLines() {
	ctx := context.Background()
	c, _ := client.FromEnv()
	run, err := c.SubmitWorkflow(ctx, "infra", "deploy", nil, true)
	if err != nil {
		log.Fatal(err)
	}
	task, _ := run.Task("build")
	for line, err := range c.TaskRunLogLines(ctx, task.ID, true) {
		if err != nil {
			log.Fatal(err) // cut short: follow again to read on
		}
		fmt.Println(line)
	}
}

// Approving what a run waits for.
func ExampleClient_Approve() {
	ctx := context.Background()
	c, _ := client.FromEnv()
	run, err := c.GetWorkflowRun(ctx, "infra", "0193a4c2-7d1e-7b7a-9c0e-2f6a1b3c4d5e")
	if err != nil {
		log.Fatal(err)
	}
	actions, err := c.ActionsOfRun(ctx, "infra", run)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range actions {
		if a.Type == "approval" && a.Status == "submitted" {
			if err := c.Approve(ctx, "infra", a.ID, "looks good"); err != nil {
				log.Fatal(err)
			}
		}
	}
}

// Applying a workflow kept in a file, every field of it kept.
func ExampleClient_ApplyWorkflowJSON() {
	ctx := context.Background()
	c, _ := client.FromEnv()
	doc, err := os.ReadFile("deploy.json")
	if err != nil {
		log.Fatal(err)
	}
	w, created, err := c.ApplyWorkflowJSON(ctx, "infra", doc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.Name, "version", w.Version, "created", created)
}
