"""What the Dask code of the distributed solvers and the GP search share."""


def live_workers(client):
    """The addresses of the workers of ``client``'s cluster, asked of the
    scheduler.

    Not ``client.scheduler_info()["workers"]``: that returns the client's
    cached view, which the client's periodic refresh (every two seconds)
    replaces with one that lists no workers, so a call that races with it
    finds none, and a fit would take its live workers for dead."""
    return sorted(client.sync(client.scheduler.identity, n_workers=-1)["workers"])
