// gtp.py driven by Sabaki's own GTP library, @sabaki/gtp, the way Sabaki drives an engine: the state tracker
// syncs board size, komi and moves; an analysis is a kata-analyze command whose info lines a subscriber reads
// and which Sabaki ends by sending the next command (protocol_version, its "abort"); then a short game of
// genmove and kata-genmove_analyze. Prints one JSON object for tests/test_gtp_engine.py to check.
//
//     NODE_PATH=<folder with node_modules/@sabaki/gtp> node tests/sabaki_gtp_session.js python gtp.py [flags]

const {Controller, ControllerStateTracker} = require('@sabaki/gtp')

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function main() {
  const [python, ...engineArgs] = process.argv.slice(2)
  const engine = new Controller(python, engineArgs)
  const tracker = new ControllerStateTracker(engine)
  const stderr = []
  engine.on('stderr', ({content}) => stderr.push(content))
  engine.start()
  const out = {}

  out.commands = (await engine.sendCommand({name: 'list_commands'})).content.split('\n')
  await tracker.sync({komi: 24.5, boardsize: [5, 5], history: [{name: 'play', args: ['B', 'C3']}]})

  const infos = []
  const analysis = engine.sendCommand({name: 'kata-analyze', args: ['W', '10']}, ({line}) => {
    if (line.startsWith('info ')) infos.push(line)
  })
  for (let waited = 0; infos.length < 3 && waited < 60000; waited += 20) await sleep(20)
  const abort = await engine.sendCommand({name: 'protocol_version'})
  const ended = await analysis
  out.analysis = {infos, error: !!ended.error, abort: abort.content, linesAfterStop: 0}
  const seen = infos.length
  await sleep(300) // nothing may stream once the analysis is over
  out.analysis.linesAfterStop = infos.length - seen

  out.game = []
  for (const [name, colour] of [['genmove', 'W'], ['kata-genmove_analyze', 'B'], ['genmove', 'W']]) {
    let played = null
    const lines = []
    const response = await tracker.queueCommand({name, args: name === 'genmove' ? [colour] : [colour, '10']}, )
    for (const line of response.content.split('\n')) {
      if (line.startsWith('info ')) lines.push(line)
      else if (line.startsWith('play ')) played = line.slice(5).trim()
    }
    out.game.push({name, colour, error: !!response.error, move: name === 'genmove' ? response.content : played, infos: lines.length})
  }
  await sleep(100)
  out.history = tracker.state.history
  out.finalScore = (await engine.sendCommand({name: 'final_score'})).content
  await engine.stop()
  out.stderr = stderr
  console.log(JSON.stringify(out))
}

main().catch(error => {
  console.error(`sabaki_gtp_session: ${error}`)
  process.exit(1)
})
