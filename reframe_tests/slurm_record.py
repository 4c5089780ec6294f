"""What Slurm itself recorded about a job: how it ended when it did not end by its own hand
(a node that failed, the time limit, memory), and the energy it used. Read with ``sacct`` and
``sacctmgr``, which every Slurm site with accounting has (ReFrame's ``slurm`` scheduler needs
them too); a site whose accounting does not answer loses these lines, never a run."""
import datetime
import subprocess
import time

# Job states in which Slurm, not the job, ended the job.
ENDED_BY_SLURM = {
    'NODE_FAIL': 'a node of the job failed',
    'BOOT_FAIL': 'a node of the job failed to boot',
    'TIMEOUT': 'the job reached its time limit',
    'DEADLINE': 'the job reached its deadline',
    'OUT_OF_MEMORY': 'the job ran out of memory',
    'PREEMPTED': 'the job was preempted',
    'CANCELLED': 'the job was cancelled',
}
TIMEOUT_S = 60
# How long after a job's end the event that ended it may be stamped.
EVENT_AFTER_END = datetime.timedelta(seconds=10)
# How long a failed node's event may take to reach the accounting (seconds).
EVENT_WAIT_S = 15


def _query(*cmd):
    """(the command's '|'-separated rows, '') or ([], why it could not answer)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        return [], str(err)
    if proc.returncode != 0:
        return [], f'{cmd[0]} exited with status {proc.returncode}'
    return [line.split('|') for line in proc.stdout.splitlines() if line.strip()], ''


def failed_nodes(jobid, nodes):
    """[(node, state, reason, since)] of the job's nodes that Slurm took out of service while
    it ran: its accounting's node events (DOWN, DRAIN, FAIL, ...) from the job's start to its
    end (an event that ended the job is stamped with the job's end time, or just after), else
    the controller's nodes that are out of service now, with their reasons."""
    rows, _ = _query('sacct', '-j', str(jobid), '-X', '-n', '-P', '--format=Start,End')
    if not rows or len(rows[0]) != 2 or not nodes:
        return []
    try:
        start, end = (datetime.datetime.fromisoformat(t) for t in rows[0])
    except ValueError:          # 'Unknown': not started, or not ended
        return []
    events, _ = _query('sacctmgr', '-n', '-P', 'list', 'event', 'nodes=' + ','.join(nodes),
                    'start=' + start.isoformat(), 'format=NodeName,State,Reason,TimeStart')
    found = []
    for event in events:
        if len(event) != 4 or event[0] not in nodes:
            continue
        try:
            since = datetime.datetime.fromisoformat(event[3])
        except ValueError:
            continue
        if start <= since <= end + EVENT_AFTER_END:
            found.append(tuple(event))
    if found:
        return found
    # The controller knows at once; its accounting may hold the event only seconds later.
    down, _ = _query('sinfo', '-h', '-N', '-R', '-n', ','.join(nodes), '-o', '%N|%T|%E|%H')
    return [(node, state.upper(), reason, since) for node, state, reason, since in
            (row for row in down if len(row) == 4 and row[0] in nodes)]


def failure(job):
    """One line saying how Slurm ended ``job``, naming the nodes it took out of service; None
    when the job ended by itself (its own exit status tells the rest)."""
    state = (job.state or '').split(',')[0]
    if state not in ENDED_BY_SLURM:
        return None
    nodes = list(job.nodelist or [])
    line = f'Slurm ended job {job.jobid} {state}: {ENDED_BY_SLURM[state]}'
    for _ in range(EVENT_WAIT_S):
        failed = failed_nodes(job.jobid, nodes)
        if failed or state not in ('NODE_FAIL', 'BOOT_FAIL'):
            break
        time.sleep(1)       # a node resumed at once, its event not yet in the accounting
    if failed:
        line += '; ' + '; '.join(f'node {node} went {node_state} at {since} ({reason})'
                                 for node, node_state, reason, since in failed)
    elif state in ('NODE_FAIL', 'BOOT_FAIL'):
        line += ' (neither its accounting nor its controller names the node)'
    if nodes:
        line += f'; the job ran on {",".join(nodes)}'
    return line


def energy(jobid):
    """Slurm's ConsumedEnergyRaw (J) for a finished job, or why there is none."""
    rows, why = _query('sacct', '-j', str(jobid), '-X', '-n', '-P', '--format=ConsumedEnergyRaw')
    if why:
        return f'n/a: {why}'
    value = rows[0][0].strip() if rows else ''
    # Without an energy plugin Slurm records 0 J: no job of this suite uses none.
    if not value.isdigit() or int(value) == 0:
        return 'n/a: no energy accounting (AcctGatherEnergyType)'
    return value
