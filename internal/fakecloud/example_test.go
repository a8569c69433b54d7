package fakecloud_test

import (
	"context"
	"fmt"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// A controller test starts the fake, points the client at it, injects a
// fault and counts the calls that reached it.
func Example() {
	fake := fakecloud.Start(fakecloud.DefaultData())
	defer fake.Close()

	client := cloudapi.New(cloudapi.Options{})
	creds := cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret)
	ctx := context.Background()

	pipes, err := client.ListPipes(ctx, fake.URL, creds, fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, cloudapi.ListOptions[swv1.Pipe]{})
	fmt.Println(len(pipes.Items), err)

	// The next call fails with a 503; the one after succeeds again.
	fake.SetFault(fakecloud.OpListReversePrivateEndpoints, fakecloud.Fault{Status: 503, Times: 1})
	_, err = client.ListReversePrivateEndpoints(ctx, fake.URL, creds, fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID,
		cloudapi.ListOptions[swv1.ReversePrivateEndpoint]{})
	fmt.Println(cloudapi.ReasonOf(err))

	// Alerts are served from the same URL.
	fake.DeleteAlert(fakecloud.SecondAlertID)
	_, err = client.GetAlert(ctx, fake.URL, cloudapi.NewBearerToken(fakecloud.DefaultAlertToken), fakecloud.SecondAlertID)
	fmt.Println(cloudapi.ReasonOf(err))

	fmt.Println(fake.Calls(fakecloud.OpListPipes), fake.Calls(fakecloud.OpListReversePrivateEndpoints), fake.Calls(fakecloud.OpGetAlert))
	// Output:
	// 8 <nil>
	// ServerError
	// NotFound
	// 1 1 1
}
