"""Palavras em português dos clientes de terminal."""

from __future__ import annotations

WORDS: dict[str, str] = {
    "status.waiting": "à espera de um adversário",
    "status.countdown": "a começar",
    "status.running": "em corrida",
    "status.finished": "terminada",
    "status.closed": "fechada",
    "reason.cleared": "limpou primeiro",
    "reason.count": "mais cartas nas fundações",
    "reason.reached_first": "mesma contagem, alcançada primeiro",
    "reason.abandoned": "o adversário abandonou a corrida classificada",
    "reason.draw": "empate",
    "attempt.playing": "ainda a jogar",
    "attempt.cleared": "limpou a mesa",
    "attempt.resigned": "desistiu",
    "attempt.abandoned": "ausente demasiado tempo (abandonou)",
    "attempt.stuck": "declarou-se bloqueado",
    "attempt.dead": "nenhum caminho para uma fundação",
    "attempt.blocked": "nenhuma jogada legal",
    "attempt.time_limit": "sem tempo",
    "attempt.race_over": "ainda a jogar no fim",
    "closed.left": "o criador saiu",
    "closed.abandoned": "o criador ausentou-se",
    "closed.cancelled": "o pedido de emparelhamento foi cancelado",
    "closed.lobby_full": "a sala estava cheia",
    "closed.expired": "ninguém entrou a tempo",
    "closed.operator": "um operador fechou-a",
    "closed.paired": "o emparelhamento sentou-o noutra corrida",
    "go": "Já!",
    "joined": "{name} entrou.",
    "left_before_start": "{name} saiu antes do início.",
    "disconnected": "{name} desligou-se.",
    "back": "{name} voltou.",
    "you_win": "Ganhou: {reason}.",
    "wins": "{name} ganha: {reason}.",
    "draw": "Empate: ambos têm {count}/52 nas fundações.",
    "waiting": "À espera de um adversário ...",
    "opponent_joins": "O seu adversário entra com:",
    "keys_help": """Teclas do ecrã completo (o rodapé mostra as que funcionam agora):
  5d ts 10h    escreva uma carta: move-se quando tem um só destino legal, senão os destinos acendem-se
  f 1-6        o destino da carta acesa: a sua fundação, uma coluna (Esc cancela)
  rato         clique numa carta, depois num número de coluna aceso ou em "Foundations"
  m            a lista numerada das jogadas legais (setas e Enter, ou um clique, jogam uma)
  o            movimento automático: as cartas seguras sobem sozinhas às fundações
  u            desfazer (corridas com desfazer; contado)
  e            a redistribuição única (corridas que a permitem; pergunta antes)
  x  g         declarar-se bloqueado, desistir (cada um pergunta antes)
  ?            esta ajuda
  Ctrl-Q Ctrl-C Ctrl-D   sair de imediato
Depois do resultado: r desforra, p rever a corrida, l a sala, q sair.""",
}
