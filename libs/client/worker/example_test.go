package worker_test

import (
	"context"
	"log"
	"os"

	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/client/worker"
)

// deploy stands for the work a worker does.
func deploy(context.Context, string) (string, error) { return "https://shop.example.com", nil }

func ExampleWorker() {
	ctx := context.Background()
	c, err := client.New(os.Getenv("BATON_URL"), client.WithToken(os.Getenv("WORKER_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	err = worker.New(c, "deliver", "deploy").Concurrency(4).
		Handle(func(ctx context.Context, t *worker.Task) (map[string]string, error) {
			t.Logf("deploying %s", t.Param("version"))
			url, err := deploy(ctx, t.Param("version"))
			if err != nil {
				return nil, err // the attempt fails, and is retried as the task allows
			}
			return map[string]string{"url": url}, nil
		}).
		Run(ctx)
	if err != nil {
		log.Fatal(err)
	}
}
