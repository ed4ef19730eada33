"""Las palabras de los clientes de terminal, en español."""

from __future__ import annotations

WORDS: dict[str, str] = {
    "status.waiting": "esperando a un rival",
    "status.countdown": "empezando",
    "status.running": "en carrera",
    "status.finished": "terminada",
    "status.closed": "cerrada",
    "reason.cleared": "despejó primero",
    "reason.count": "más cartas en los fundamentos",
    "reason.reached_first": "misma cuenta, alcanzada primero",
    "reason.abandoned": "el rival abandonó la carrera puntuada",
    "reason.draw": "empate",
    "attempt.playing": "sigue jugando",
    "attempt.cleared": "despejó la mesa",
    "attempt.resigned": "se rindió",
    "attempt.abandoned": "ausente demasiado tiempo (abandono)",
    "attempt.stuck": "se declaró atascado",
    "attempt.dead": "ningún camino a un fundamento",
    "attempt.blocked": "ningún movimiento legal",
    "attempt.time_limit": "sin tiempo",
    "attempt.race_over": "seguía jugando al final",
    "closed.left": "el creador se fue",
    "closed.abandoned": "el creador se ausentó",
    "closed.cancelled": "la búsqueda de partida rápida se canceló",
    "closed.lobby_full": "la sala estaba llena",
    "closed.expired": "nadie se unió a tiempo",
    "closed.operator": "un operador la cerró",
    "closed.paired": "la partida rápida te sentó en otra carrera",
    "go": "¡Ya!",
    "joined": "{name} se unió.",
    "left_before_start": "{name} se fue antes del inicio.",
    "disconnected": "{name} se desconectó.",
    "back": "{name} ha vuelto.",
    "you_win": "Ganas: {reason}.",
    "wins": "{name} gana: {reason}.",
    "draw": "Empate: ambos tienen {count}/52 en los fundamentos.",
    "waiting": "Esperando a un rival ...",
    "opponent_joins": "Tu rival se une con:",
    "keys_help": """Teclas de pantalla completa (el pie muestra las que funcionan ahora):
  5d ts 10h    escribe una carta: se mueve si tiene un solo destino legal, si no sus destinos se iluminan
  f 1-6        el destino de la carta iluminada: su fundamento, una columna (Esc cancela)
  ratón        haz clic en una carta y luego en un número de columna iluminado o en "Foundations"
  m            la lista numerada de movimientos legales (flechas y Enter, o un clic, juegan uno)
  o            movimiento automático: las cartas seguras suben solas a los fundamentos
  u            deshacer (carreras con deshacer; contado)
  e            el reparto único (carreras que lo permiten; pregunta antes)
  x  g         declararse atascado, rendirse (cada uno pregunta antes)
  ?            esta ayuda
  Ctrl-Q Ctrl-C Ctrl-D   salir en el acto
Tras el resultado: r revancha, p repetir la carrera, l la sala, q salir.""",
}
